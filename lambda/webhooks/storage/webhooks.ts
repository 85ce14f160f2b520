/**
 * Webhooks in the metadata table: the configuration item (through ./resource-writes.ts, with its topic
 * binding). The delivery counters of each incarnation are in ./webhook-counters.ts (sharded,
 * summed per batch), re-exported here.
 */
import type { WebhookConfig } from '../rules/webhooks';
import type { EndpointHealth } from '../rules/endpoint-health';
import type { Condition } from '../rules/conditions';
import { getResource, getResourceProjected, listResources, type ResourceItem } from '../../core/storage/resources';
import { wasCountedInFilter, createResource, replaceResource, type Check } from '../../core/storage/resource-writes';
import { seal, unseal, UnopenableSecretError, type SealContext } from './sealed';

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
   * The `updated_at` of the write that last changed `rate_limit` (absent: `updated_at`, on items
   * written before it): the version the rate's slots are numbered under ({@link rateVersion}).
   */
  rate_of?: number;
  /**
   * Counts the writes of this incarnation (1 at create); a PUT or PATCH writes only over the
   * version it read (./resource-writes.ts `replaceResource`). Absent on items written before versions.
   */
  version?: number;
  /** Endpoint health, absent while healthy: ./webhook-health.ts writes it. */
  health?: EndpointHealth;
  /**
   * {@link SEALED_ALL} on items whose every secret field is sealed (./sealed.ts): how a reader
   * knows a value is sealed, whatever it looks like. Absent on items written before it.
   */
  sealing?: typeof SEALED_ALL;
}

/**
 * The version of the webhook's `rate_limit`: the slots a delivery reserved under it stay its own
 * across a change that keeps the rate (a timeout, a header, a rotated secret), and a change of the
 * rate numbers them again (./webhook-limits.ts `reserveRateSlots`). Keyed by the whole version
 * (`updated_at`), every such change made the waiting deliveries drop their slots and reserve after
 * the backlog's, which went unused: no request for as long as the backlog had left.
 */
export const rateVersion = (w: Pick<WebhookItem, 'updated_at' | 'rate_of'>): number => w.rate_of ?? w.updated_at;

/** The marker of an item whose secrets are all sealed. */
const SEALED_ALL = 2;

/** What publish needs beside the binding to decide on a delivery job without another read. */
export interface WebhookBindingSettings {
  enabled: boolean;
  condition?: Condition;
  /** The application the webhook belongs to: it receives only messages addressed to it. */
  application?: string;
}

export const webhookBindingSettings = (w: WebhookItem): WebhookBindingSettings => ({
  enabled: w.config.enabled,
  ...(w.config.condition ? { condition: w.config.condition } : {}),
  ...(w.config.application !== undefined ? { application: w.config.application } : {}),
});

/**
 * The webhook's item, read strongly consistently: the API's reads and writes and every delivery
 * attempt decide on it, and a webhook created, changed or deleted just before must be seen as it
 * is now (an eventually consistent read could miss a webhook created just before a publish and
 * drop that delivery silently).
 */
export async function getWebhook(ns: string, name: string): Promise<WebhookItem | undefined> {
  const at = Date.now();
  const w = await openWebhook(await getResource<WebhookItem>(ns, 'WEBHOOK', name, { consistent: true }));
  if (w) readAt.set(w, at);
  return w;
}

/** What a place hand-off needs of a webhook: its incarnation and its limits, never its secrets. */
export type WebhookPlaceLimits = Pick<WebhookItem, 'id'> & { config: Partial<Pick<WebhookConfig, 'max_in_flight' | 'timeout'>> };

/**
 * The webhook's place limits, without its secrets (nothing unsealed), read eventually consistently
 * (half the read units of {@link getWebhook}): a hand-off of in-flight places promises the limits
 * from 4 s after a change, and such a read "may not reflect the results of a recently completed
 * write operation" only for about a second
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html).
 * A projection bills the whole item all the same; it keeps the secrets out of the function's memory.
 * `consistent`: for a reader that must not take a webhook created just before for one deleted.
 */
export async function getWebhookPlaceLimits(ns: string, name: string, opts: { consistent?: boolean } = {}): Promise<WebhookPlaceLimits | undefined> {
  const out = await getResourceProjected<WebhookPlaceLimits>(ns, 'WEBHOOK', name, ['id', 'config.max_in_flight', 'config.timeout'], opts);
  return out?.id ? { id: out.id, config: out.config ?? {} } : undefined;
}

/** When each item {@link getWebhook} answered was asked for (never stored with the item). */
const readAt = new WeakMap<object, number>();

/**
 * When the read that gave `w` started (epoch ms): what `w` says was true at least then. Undefined
 * for an item that did not come from {@link getWebhook}.
 */
export const webhookReadAt = (w: WebhookItem): number | undefined => readAt.get(w);

/** Where a secret of webhook `name` is stored, bound into its ciphertext. */
const where = (w: { namespace: string; name: string }, field: string): SealContext => ['webhook', w.namespace, w.name, field];

/** The stored form of each secret of a webhook item, as read (rotation writes only over the sealed secret it read). */
const storedSecret = new WeakMap<object, string>();
export const storedSecretOf = (w: WebhookItem): string => storedSecret.get(w) ?? w.secret;

/** Applies `f` to every secret of a webhook item (the signing secrets, header values, the client key), by field name. */
async function mapSecrets<T extends WebhookItem>(w: T, f: (v: string, field: string) => Promise<string>): Promise<T> {
  const out: T = { ...w };
  if (typeof w.secret === 'string') out.secret = await f(w.secret, 'secret');
  if (typeof w.previous_secret === 'string') out.previous_secret = await f(w.previous_secret, 'previous_secret');
  const c = w.config;
  if (c && (c.headers || c.tls?.client_key)) {
    const headers = c.headers ? Object.fromEntries(await Promise.all(Object.entries(c.headers).map(async ([k, v]) => [k, await f(v, `headers.${k}`)] as const))) : undefined;
    const tls = c.tls?.client_key ? { ...c.tls, client_key: await f(c.tls.client_key, 'tls.client_key') } : c.tls;
    out.config = { ...c, ...(headers ? { headers } : {}), ...(tls ? { tls } : {}) };
  }
  return out;
}

/** Fields of an opened item whose stored value did not open, with why; the item keeps their stored form. */
const unopened = new WeakMap<object, Map<string, string>>();
/** Stored forms an item carries over unopened (a PATCH that does not change them keeps them as stored). */
const keptSealed = new WeakMap<object, Map<string, string>>();

/** The secrets of `w` that could not be opened: `field: why`. A delivery that needs one fails with it. */
export const unopenedSecrets = (w: WebhookItem): ReadonlyMap<string, string> => unopened.get(w) ?? new Map();

/** Lets `next` (built from `stored`) keep, as they are stored, the values of `stored` that did not open. */
export function carryUnopened(stored: WebhookItem, next: WebhookItem): void {
  const bad = unopened.get(stored);
  if (!bad) return;
  const forms = new Map<string, string>();
  const storedForms: Record<string, string | undefined> = {
    secret: stored.secret,
    previous_secret: stored.previous_secret,
    'tls.client_key': stored.config.tls?.client_key,
    ...Object.fromEntries(Object.entries(stored.config.headers ?? {}).map(([k, v]) => [`headers.${k}`, v])),
  };
  for (const field of bad.keys()) if (storedForms[field] !== undefined) forms.set(field, storedForms[field]);
  keptSealed.set(next, forms);
}

/** The item as stored: every secret sealed, whatever it looks like, and the item marked so. */
export async function sealWebhook<T extends WebhookItem>(w: T): Promise<T> {
  const kept = keptSealed.get(w);
  const sealed = await mapSecrets(w, (v, field) => (kept?.get(field) === v ? Promise.resolve(v) : seal(v, where(w, field))));
  return { ...sealed, sealing: SEALED_ALL };
}

/**
 * The item as read, its secrets opened. One that does not open keeps its stored form and is
 * listed by {@link unopenedSecrets}: the reads of the webhook still answer, and only what needs
 * that secret (a delivery) fails, saying which.
 */
export async function openWebhook<T extends WebhookItem>(w: T | undefined): Promise<T | undefined> {
  if (!w) return undefined;
  const legacy = w.sealing !== SEALED_ALL;
  const bad = new Map<string, string>();
  const open = await mapSecrets(w, async (v, field) => {
    try {
      return await unseal(v, where(w, field), { legacy });
    } catch (e) {
      if (!(e instanceof UnopenableSecretError)) throw e;
      bad.set(field, e.message);
      return v;
    }
  });
  if (bad.size) unopened.set(open, bad);
  if (typeof w.secret === 'string') storedSecret.set(open, w.secret);
  return open;
}

/** Creates a webhook (its secrets sealed) and its binding; false when the name is taken. */
export const createWebhook = async (w: WebhookItem, settings: Record<string, unknown>, checks: Check[] = []) => createResource(await sealWebhook(w), settings, [], checks);

/** Replaces a webhook (its secrets sealed, so a plaintext item is migrated); false when it changed meanwhile. */
export const replaceWebhook = async (w: WebhookItem & { version: number }, settings: Record<string, unknown>, previous: WebhookItem, checks: Check[] = []) =>
  replaceResource(await sealWebhook(w), settings, previous.topic_filter, checks, wasCountedInFilter(previous));

/** A page of the namespace's webhooks, their secrets opened. */
export async function listWebhooks(ns: string, limit: number, offset: number, application?: string): Promise<{ items: WebhookItem[]; total: number }> {
  const keep = application === undefined ? undefined : (w: WebhookItem) => w.config?.application === application;
  // Strongly consistent: a list right after a create shows it (docs/aws-parity.md).
  const { items, total } = await listResources<WebhookItem>(ns, 'WEBHOOK', limit, offset, keep, { consistent: true });
  return { items: (await Promise.all(items.map((w) => openWebhook(w)))) as WebhookItem[], total };
}

// The delivery counters live in ./webhook-counters.ts (sharded, written per batch).
export { deleteWebhookStatus, getWebhookStatus, recordHookFailure } from './webhook-counters';
import { countNow } from './webhook-counters';

/** The end of a delivery on the counters alone (tests and tools; deliveries go through their record). */
export async function recordOutcome(ns: string, webhookId: string, o: { ok: boolean; error?: string; wasPending: boolean; now: number }) {
  await countNow(ns, webhookId, {
    ...(o.ok ? { success: 1, successAt: o.now } : { failure: 1, error: { at: o.now, message: o.error ?? 'failed' } }),
    pending: o.wasPending ? -1 : 0,
    at: o.now,
  });
}
