/**
 * A typed client of the messaging service: openapi-fetch over the types openapi-typescript
 * generates from the service's own OpenAPI document (./api.ts, `npm run client`). Every path,
 * method, body and answer is checked by the TypeScript compiler against the document.
 *
 * @example
 * const api = createMessagingClient({ baseUrl: 'http://127.0.0.1:8080/api/v1', apiKey: 'dev-key' });
 * const queue = unwrap(await api.POST('/queues', { body: { name: 'orders', topic_filter: 'orders/#' } }));
 * unwrap(await api.POST('/topics/{topic}/messages', { params: { path: { topic: 'orders/eu' } }, body: { payload: '{"id":1}' } }));
 */
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './api';

export type { components, paths, operations } from './api';
/** The `data` shapes of the API's answers and the request bodies, by schema name. */
export type Schemas = components['schemas'];
export type MessagingClient = Client<paths>;

export interface ClientOptions {
  /** The API root, e.g. `http://127.0.0.1:8080/api/v1` or the stack's `ApiUrl` output. */
  baseUrl: string;
  /** An API key of the namespace (`Authorization: Bearer <key>`). */
  apiKey: string;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
}

/**
 * Path parameters, percent-encoded; a topic keeps its `/` between levels, so
 * `orders/eu/created` is sent as three path levels (the API also decodes `%2F`, but proxies and
 * API Gateway treat an encoded slash differently than a plain one).
 */
function pathSerializer(pathname: string, params: Record<string, unknown>): string {
  return pathname.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = String(params[name] ?? '');
    return name === 'topic' ? value.split('/').map(encodeURIComponent).join('/') : encodeURIComponent(value);
  });
}

export function createMessagingClient({ baseUrl, apiKey, fetch }: ClientOptions): MessagingClient {
  return createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` }, pathSerializer, ...(fetch ? { fetch } : {}) });
}

/** An error answer of the API (the envelope's `error`), with the HTTP status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown>,
    /** Seconds to wait before retrying, from `Retry-After` (429 answers). */
    readonly retryAfterSeconds?: number,
  ) {
    super(`${status} ${code}: ${message}`);
    this.name = 'ApiError';
  }
}

type Envelope<T> = { success: true; data: T };
type ErrorEnvelope = Schemas['ErrorEnvelope'];

/**
 * The `data` of a successful answer; throws {@link ApiError} for an error answer.
 * @example const { message_id } = unwrap(await api.POST('/topics/{topic}/messages', { ... }));
 */
export function unwrap<T>(result: { data?: Envelope<T>; error?: unknown; response: Response }): T {
  if (result.data?.success) return result.data.data;
  const { response } = result;
  const error = (result.error as ErrorEnvelope | undefined)?.error;
  const retryAfter = Number(response.headers.get('retry-after'));
  throw new ApiError(
    response.status,
    error?.code ?? 'UNKNOWN',
    error?.message ?? `HTTP ${response.status} without an error envelope`,
    error?.details ?? {},
    Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
  );
}
