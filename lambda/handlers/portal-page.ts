/**
 * `GET /v1/portal-page?ns=<namespace>` (docs/portal.md): the console's index.html, which runs in
 * portal mode, answered with the console's security headers but the CSP `frame-ancestors` and
 * `img-src` opened to the origins the namespace allows (`portal-origins`; none by default, so
 * the page cannot be framed and X-Frame-Options stays DENY). CloudFront cannot read DynamoDB, so
 * the per-namespace header comes from here; CloudFront's `/portal/` forwards to this path.
 * The namespace's stored theme (brand colour, logo) rides in a meta element the page reads.
 * No key: the page holds no data, and says nothing of a namespace but the origins allowed to frame
 * it and its theme, which any framing page shows anyway. One GetItem (a projection of the
 * namespace's item).
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { portalPage } from '../applications/portal-page';

/** @public The Lambda runtime calls it by name (lib/ sets `handler`); the local gateway and bin/invoke.ts import it by a template path. */
export const handler = (event: Pick<APIGatewayProxyEvent, 'httpMethod' | 'queryStringParameters'>) => portalPage(event);
