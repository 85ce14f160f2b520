/**
 * Lambda REQUEST authorizer (DESIGN.md section 2). Looks the bearer key up by its SHA-256 hash
 * (one GetItem), applies the Host rule and returns the key's namespace and scopes as context; the
 * handlers' authorize middleware checks the route's scope. An invalid key throws `Unauthorized`,
 * which API Gateway answers with 401 (Gateway Response UNAUTHORIZED, in the envelope).
 *
 * The answer names the key's SHA-256 hash as `usageIdentifierKey`: the API's key source is
 * AUTHORIZER, so API Gateway meters the request against the usage-plan API key with that value
 * (the key's twin, created by the admin CLI). The hash is no secret (the key is), 64 characters
 * fit API Gateway's 20 to 128, and it is what the table already holds for every key.
 *
 * A portal link or session (lambda/applications/storage/portal.ts) is told apart by its prefix and
 * looked up by its own hash; it answers with its namespace, its application and `portal`, and is
 * metered under the usage key of the API key that created its link (that key's twin exists while
 * the key does). The policy still allows the whole stage: API Gateway caches the answer per
 * Authorization and Host for every route, so which routes a portal credential may call is decided
 * per request by the handlers' authorize middleware, never by the cached policy
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-lambda-authorizer-output.html).
 */
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { bearerKey, namespaceFromHost } from '../core/rules/auth';
import { config } from '../core/config';
import { findActiveKey } from '../namespaces/storage/api-keys';
import { findActivePortalCredential } from '../applications/storage/portal';
import { credentialKind, portalScopes } from '../core/rules/portal';
import { getNamespace } from '../namespaces/storage/namespaces';
import { logger } from '../core/observability';
import type { AuthorizerContext } from '../core/middleware/authorize';

export const UNAUTHORIZED = 'Unauthorized';

/** Allows every method of this API stage: the scope of each route is checked by its handler. */
function stageWildcard(methodArn: string): string {
  // arn:aws:execute-api:region:account:apiId/stage/METHOD/resource...
  const [prefix, stage] = methodArn.split('/');
  return `${prefix}/${stage}/*`;
}

interface Principal {
  namespace: string;
  scopes: string[];
  key_id: string;
  /** The usage-plan key the request is metered under. */
  hash: string;
  portal?: { portal: string; application: string };
}

/** The API key, or portal link or session, a bearer credential names; undefined when none is valid. */
async function principalOf(token: string): Promise<Principal | undefined> {
  if (!credentialKind(token)) return findActiveKey(token);
  const found = await findActivePortalCredential(token, Date.now());
  if (!found) return undefined;
  const { kind, grant } = found;
  return {
    namespace: grant.namespace,
    scopes: portalScopes(kind),
    key_id: `portal-${kind}:${grant.application}`,
    hash: grant.usage_key,
    portal: { portal: kind, application: grant.application },
  };
}

export async function handler(event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> {
  const headers = Object.fromEntries(Object.entries(event.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  const key = bearerKey(headers.authorization);
  if (!key) throw new Error(UNAUTHORIZED);
  const rec = await principalOf(key);
  if (!rec) throw new Error(UNAUTHORIZED);
  const context: AuthorizerContext = { namespace: rec.namespace, scopes: rec.scopes.join(','), keyId: rec.key_id, ...rec.portal };
  const hostNs = namespaceFromHost(headers.host, config().baseDomain);
  if (hostNs && hostNs !== rec.namespace) {
    // The Host names another namespace: 404 when it does not exist, else the key is not one of its
    // keys (401). Either way the request never sees data of the key's namespace.
    if (await getNamespace(hostNs)) throw new Error(UNAUTHORIZED);
    context.hostError = 'NAMESPACE_NOT_FOUND';
  }
  logger.debug('authorized', { namespace: rec.namespace, keyId: rec.key_id });
  return {
    principalId: rec.key_id,
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: stageWildcard(event.methodArn) }],
    },
    context: context as Record<string, string>,
    usageIdentifierKey: rec.hash,
  };
}
