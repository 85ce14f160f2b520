/**
 * `GET /namespace`: the authenticated key's namespace. Thin: ../namespaces/operations.ts.
 */
import { httpHandler } from './http';
import { namespaceAccessOperations } from './namespace-access';
import { reply } from '../core/middleware/api-request';
import { describeNamespace } from '../namespaces/operations';

/** @public The Lambda runtime calls it by name (lib/ sets `handler`); the local gateway and bin/invoke.ts import it by a template path. */
export const handler = httpHandler('namespace', {
  getNamespace: async (req) => reply(await describeNamespace(req.namespace, req.host, req.protocol)),
  ...namespaceAccessOperations,
});
