/**
 * The namespace operation behind `GET /namespace` (../handlers/namespace.ts): the authenticated
 * key's namespace, with the URL its clients use.
 */
import { notFound } from '../core/rules/errors';
import { isoTime } from '../core/rules/envelope';
import { config } from '../core/config';
import { API_BASE_PATH } from '../core/rules/routes';
import { getNamespace } from './storage/namespaces';

/** The URL clients of a namespace use, from the configured template or the request's host. */
function namespaceEndpoint(ns: string, host: string | undefined, protocol: string): string {
  const { endpointTemplate } = config();
  if (endpointTemplate) return endpointTemplate.replaceAll('{namespace}', ns);
  return `${protocol}://${host ?? 'localhost'}${API_BASE_PATH}`;
}

/** The namespace `name` as `GET /namespace` answers it; NAMESPACE_NOT_FOUND if it is gone. */
export async function describeNamespace(name: string, host: string | undefined, protocol: string) {
  const ns = await getNamespace(name);
  if (!ns) throw notFound('NAMESPACE_NOT_FOUND', `Namespace ${name}`);
  return {
    name: ns.name,
    endpoint: namespaceEndpoint(ns.name, host, protocol),
    created_at: isoTime(ns.created_at),
    status: ns.status,
  };
}
