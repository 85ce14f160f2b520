/**
 * `GET /namespace`: the authenticated key's namespace.
 */
import { httpHandler } from './http';
import { namespaceAccessOperations } from './namespace-access';
import { reply } from '../core/middleware/api-request';
import { notFound } from '../core/rules/errors';
import { isoTime } from '../core/rules/envelope';
import { config } from '../core/config';
import { getNamespace } from '../namespaces/storage/namespaces';
import { API_BASE_PATH } from '../core/rules/routes';

/** The URL clients of a namespace use, from the configured template or the request's host. */
export function namespaceEndpoint(ns: string, host: string | undefined, protocol: string): string {
  const { endpointTemplate } = config();
  if (endpointTemplate) return endpointTemplate.replaceAll('{namespace}', ns);
  return `${protocol}://${host ?? 'localhost'}${API_BASE_PATH}`;
}

export const handler = httpHandler('namespace', {
  getNamespace: async (req) => {
    const ns = await getNamespace(req.namespace);
    if (!ns) throw notFound('NAMESPACE_NOT_FOUND', `Namespace ${req.namespace}`);
    return reply({
      name: ns.name,
      endpoint: namespaceEndpoint(ns.name, req.host, req.protocol),
      created_at: isoTime(ns.created_at),
      status: ns.status,
    });
  },
  ...namespaceAccessOperations,
});
