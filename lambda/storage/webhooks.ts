/**
 * Webhooks in the metadata table: the configuration item (through ./resources.ts, with its topic
 * binding). The delivery counters of each incarnation are in ./webhook-counters.ts (sharded,
 * summed per batch), re-exported here.
 */
import type { WebhookConfig } from '../domain/webhooks';
import type { EndpointHealth } from '../domain/endpoint-health';
import type { Condition } from '../domain/conditions';
import { createResource, getResource, listResources, replaceResource, type ResourceItem } from './resources';
import { seal, unseal, type SealContext } from './sealed';

export interface WebhookItem extends ResourceItem {
  kind: 'WEBHOOK';
  config: WebhookConfig;
  /**
   * The signing secret (`whsec_...`); no read API returns it. Stored sealed (./sealed.ts), as are
   * `previous_secret`, header values and `tls.client_key`: {@link sealWebhook}, {@link openWebhook}.
   */
  secret: string;
  /** The secret before the last rotation (extension, ./webhook-secrets.ts). */
  previous_secret?: string;
  updated_at: number;
  /**
   * Counts the writes of this incarnation (1 at create); a PUT or PATCH writes only over the
   * version it read (./resources.ts `replaceResource`). Absent on items written before versions.
   */
  version?: number;
  /** Endpoint health (issue 22), absent while healthy: ./webhook-health.ts writes it. */
  health?: EndpointHealth;
}

/** What publish needs beside the binding to decide on a delivery job without another read. */
export interface WebhookBindingSettings {
  enabled: boolean;
  condition?: Condition;
}

export const webhookBindingSettings = (w: WebhookItem): WebhookBindingSettings => ({
  enabled: w.config.enabled,
  ...(w.config.condition ? { condition: w.config.condition } : {}),
});

/**
 * The webhook's item, read strongly consistently: the API's reads and writes and every delivery
 * attempt decide on it, and a webhook created, changed or deleted just before must be seen as it
 * is now (an eventually consistent read could miss a webhook created just before a publish and
 * drop that delivery silently).
 */
export const getWebhook = async (ns: string, name: string) => openWebhook(await getResource<WebhookItem>(ns, 'WEBHOOK', name, { consistent: true }));

/** Where a secret of webhook `name` is stored, bound into its ciphertext. */
const where = (w: { namespace: string; name: string }, field: string): SealContext => ['webhook', w.namespace, w.name, field];

/** The stored form of each secret of a webhook item, as read (rotation writes only over the sealed secret it read). */
const storedSecret = new WeakMap<object, string>();
export const storedSecretOf = (w: WebhookItem): string => storedSecret.get(w) ?? w.secret;

/** Applies `f` to every secret of a webhook item: the signing secrets, header values and the client key. */
async function mapSecrets<T extends WebhookItem>(w: T, f: (v: string, context: SealContext) => Promise<string>): Promise<T> {
  const out: T = { ...w };
  if (typeof w.secret === 'string') out.secret = await f(w.secret, where(w, 'secret'));
  if (typeof w.previous_secret === 'string') out.previous_secret = await f(w.previous_secret, where(w, 'previous_secret'));
  const c = w.config;
  if (c && (c.headers || c.tls?.client_key)) {
    const headers = c.headers
      ? Object.fromEntries(await Promise.all(Object.entries(c.headers).map(async ([k, v]) => [k, await f(v, where(w, `headers.${k}`))] as const)))
      : undefined;
    const tls = c.tls?.client_key ? { ...c.tls, client_key: await f(c.tls.client_key, where(w, 'tls.client_key')) } : c.tls;
    out.config = { ...c, ...(headers ? { headers } : {}), ...(tls ? { tls } : {}) };
  }
  return out;
}

/** The item as stored: every secret sealed (issue 25 item 7). */
export const sealWebhook = <T extends WebhookItem>(w: T): Promise<T> => mapSecrets(w, seal);

/** The item as read, its secrets opened (plaintext ones, written before encryption, as they are). */
export async function openWebhook<T extends WebhookItem>(w: T | undefined): Promise<T | undefined> {
  if (!w) return undefined;
  const open = await mapSecrets(w, unseal);
  if (typeof w.secret === 'string') storedSecret.set(open, w.secret);
  return open;
}

/** Creates a webhook (its secrets sealed) and its binding; false when the name is taken. */
export const createWebhook = async (w: WebhookItem, settings: Record<string, unknown>) => createResource(await sealWebhook(w), settings);

/** Replaces a webhook (its secrets sealed, so a plaintext item is migrated); false when it changed meanwhile. */
export const replaceWebhook = async (w: WebhookItem & { version: number }, settings: Record<string, unknown>, previousFilter: string) =>
  replaceResource(await sealWebhook(w), settings, previousFilter);

/** A page of the namespace's webhooks, their secrets opened. */
export async function listWebhooks(ns: string, limit: number, offset: number): Promise<{ items: WebhookItem[]; total: number }> {
  const { items, total } = await listResources<WebhookItem>(ns, 'WEBHOOK', limit, offset);
  return { items: (await Promise.all(items.map((w) => openWebhook(w)))) as WebhookItem[], total };
}

// The delivery counters live in ./webhook-counters.ts (sharded, written per batch: issue 22).
export { deleteWebhookStatus, getWebhookStatus, recordHookFailure, type WebhookStatusItem } from './webhook-counters';
import { countLater, countNow } from './webhook-counters';

/**
 * A later failed attempt of a delivery that already waits (it moves no count, so a repeat is
 * harmless), written with the Task's counters when it ends (lambda/handlers/webhook-attempt.ts).
 */
export function recordRetryScheduled(ns: string, webhookId: string, a: { nextRetry: number; error: string; now: number }): void {
  countLater(ns, webhookId, { at: a.now, nextRetry: a.nextRetry, error: { at: a.now, message: a.error } });
}

/** The end of a delivery on the counters alone (tests and tools; deliveries go through their record). */
export async function recordOutcome(ns: string, webhookId: string, o: { ok: boolean; error?: string; wasPending: boolean; now: number }) {
  await countNow(ns, webhookId, {
    ...(o.ok ? { success: 1, successAt: o.now } : { failure: 1, error: { at: o.now, message: o.error ?? 'failed' } }),
    pending: o.wasPending ? -1 : 0,
    at: o.now,
  });
}
