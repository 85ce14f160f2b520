/** `GET /namespace/access` (docs/console.md), served by ./namespace.ts. Thin: ../console/access.ts. */
import type { Operation } from './http';
import { reply } from '../core/middleware/api-request';
import { rateLimitPeeker } from '../limits/rate-limit';
import { accessOf } from '../console/access';

let peek: ReturnType<typeof rateLimitPeeker> | undefined;

export const namespaceAccessOperations: Record<string, Operation> = {
  getAccess: async (req) => reply(await accessOf(req.keyId, req.scopes, req.namespace, (peek ??= rateLimitPeeker()))),
};
