/**
 * API keys, scopes and the Host rule (DESIGN.md section 2). Pure: no storage access.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Scope } from './routes';
import { insufficientPermissions } from './errors';

/** Scopes a key can hold; `*` grants all of them. `read` needs no scope. */
export const KEY_SCOPES = ['publish', 'consume', 'manage', '*'] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

/** Keys are stored only as this hash. */
export const hashApiKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

/** A new random API key; shown once by the admin CLI, stored only hashed. */
export const generateApiKey = (namespace: string): string => `${namespace}_${randomBytes(24).toString('base64url')}`;

/** Whether a key with `scopes` may call a route that requires `required`. */
export function hasScope(scopes: readonly string[], required: Scope): boolean {
  return required === 'read' || scopes.includes('*') || scopes.includes(required);
}

/**
 * Throws 403 INSUFFICIENT_PERMISSIONS naming the first of `required` the key lacks: the one check
 * of the route table's `scope` and `also` (middleware/authorize.ts) and of the scopes an operation
 * needs for what its body asks (a webhook's hooks or deliveries, domain/webhooks.ts
 * `webhookScopes`).
 * @example requireScopes(['manage'], ['manage', 'publish']) // throws, details.required_scope 'publish'
 */
export function requireScopes(scopes: readonly string[], required: readonly (Scope | undefined)[]): void {
  const missing = required.find((s) => s !== undefined && !hasScope(scopes, s));
  if (missing) throw insufficientPermissions(missing);
}

/**
 * Extracts the key from `Authorization: Bearer <key>`; undefined for a missing header, another
 * scheme, or an empty key.
 */
export function bearerKey(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer +(\S+)\s*$/i.exec(header);
  return m?.[1];
}

/** Namespace names: lowercase DNS label, 1 to 63 characters (DESIGN.md section 4). */
export const NAMESPACE_NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * The namespace label a request's Host names, if any: `acme.localhost:8080` with base domain
 * `localhost` names `acme`. A Host without a label under the base domain (an IP address, the base
 * domain itself, the API Gateway default domain) names none. Labels compare case-insensitively.
 */
export function namespaceFromHost(host: string | undefined, baseDomain: string | undefined): string | undefined {
  if (!host || !baseDomain) return undefined;
  const hostname = host.replace(/:\d+$/, '').toLowerCase();
  const suffix = `.${baseDomain.toLowerCase()}`;
  if (!hostname.endsWith(suffix)) return undefined;
  const label = hostname.slice(0, -suffix.length);
  return label && !label.includes('.') ? label : undefined;
}
