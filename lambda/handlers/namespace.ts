/**
 * `GET /namespace`: the authenticated key's namespace. Thin: ../namespaces/operations.ts.
 */
import { httpHandler } from './http';
import { namespaceAccessOperations } from './namespace-access';
import { reply } from '../core/middleware/api-request';
import { describeNamespace } from '../namespaces/operations';

export const handler = httpHandler('namespace', {
  getNamespace: async (req) => reply(await describeNamespace(req.namespace, req.host, req.protocol)),
  ...namespaceAccessOperations,
});
