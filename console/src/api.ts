/**
 * The console's only way to the service: the typed client of client/ on the API of the origin the
 * console was served from (`/api/v1`), with the API key of this tab's session. The key lives in
 * sessionStorage (gone when the tab closes) and is only ever sent in the Authorization header of
 * requests to that API.
 */
import { ApiError, createMessagingClient, unwrap, type MessagingClient, type Schemas } from '../../client/index';

export { ApiError, unwrap };
export type { Schemas };

const KEY_ITEM = 'messaging-console.api-key';
export const API_BASE = `${location.origin}/api/v1`;

export type Scope = 'publish' | 'consume' | 'manage';

export interface Session {
  api: MessagingClient;
  access: Schemas['NamespaceAccess'];
  /** Whether the key's scopes allow an action (every key may read). */
  can(scope: Scope): boolean;
}

export const storedKey = () => sessionStorage.getItem(KEY_ITEM);
export const forgetKey = () => sessionStorage.removeItem(KEY_ITEM);

/** Checks the key against the API (GET /namespace/access) and keeps it for this tab. */
export async function signIn(key: string): Promise<Session> {
  const api = createMessagingClient({ baseUrl: API_BASE, apiKey: key });
  const access = unwrap(await api.GET('/namespace/access'));
  sessionStorage.setItem(KEY_ITEM, key);
  const scopes = new Set(access.scopes);
  return { api, access, can: (s) => scopes.has('*') || scopes.has(s) };
}

/** One line for an error answer: its code and message (the API says what to do). */
export function describeError(e: unknown): string {
  if (e instanceof ApiError) return `${e.code}: ${e.message.replace(/^\d+ [A-Z_]+: /, '')}`;
  if (e instanceof TypeError) return `The API at ${API_BASE} did not answer (${e.message}). Check that it is running, then try again.`;
  return String((e as Error)?.message ?? e);
}
