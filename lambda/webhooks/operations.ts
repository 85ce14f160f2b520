/**
 * Webhook operations behind the HTTP handler: configuration CRUD (with the SSRF guard at create,
 * PUT and PATCH), status, and the test delivery (DESIGN.md section 9).
 */
import { alreadyExists, ApiError, notFound, validationError } from '../core/rules/errors';
import { isoTime } from '../core/rules/envelope';
import { newId, sleep } from '../core/rules/clock';
import { newSecret } from './rules/signatures';
import { configView, WEBHOOK_DEFAULTS, type WebhookConfig } from './rules/webhooks';
import { effectiveHealth, webhookStatusOf, type NamespaceHealthDefaults } from './rules/endpoint-health';
import { namespaceHealthDefaults } from './storage/webhook-health';
import { buildRequest } from './rules/delivery';
import type { PublishedMessage } from '../core/rules/message';
import { deleteResource } from '../core/storage/resource-writes';
import {
  createWebhook as storeWebhook,
  deleteWebhookStatus,
  getWebhook,
  listWebhooks as readWebhooks,
  replaceWebhook,
  carryUnopened,
  unopenedSecrets,
  webhookBindingSettings,
  rateVersion,
  type WebhookItem,
} from './storage/webhooks';
import { targetProblem } from './storage/target-guard';
import { sendRequest, tlsProblem } from './storage/http-delivery';
import { keptRotation } from './rotation';
import { foldWriters, readWebhookCounters } from './storage/webhook-counters';
import { logger } from '../core/observability';
import { applicationTakesWebhooks } from '../applications/storage/applications';
import { unknownApplication } from '../applications/rules';
import type { Check } from '../core/storage/resource-writes';
import { countAppWebhookIn, countAppWebhookOut, leavesApplication, namespaceCaps } from '../core/storage/resource-limits';
import { applicationWebhookLimitExceeded } from '../core/rules/resource-limits';
import { ownedWebhook } from './application-scope';

const webhookNotFound = (name: string) => notFound('WEBHOOK_NOT_FOUND', `Webhook ${name}`);

/**
 * The webhook, or 404. `owner` is the application of a portal session: a webhook of
 * another application, or of none, answers exactly as one that does not exist.
 */
const requireWebhook = async (ns: string, name: string, owner?: string): Promise<WebhookItem> => ownedWebhook(await getWebhook(ns, name), name, owner);

/**
 * In the write's own transaction: the webhook's application must exist and not be being deleted,
 * and have room for one more webhook when the webhook joins it (a create, or an update from
 * another application or none; 409 at `webhooks-per-application`); the application it leaves
 * counts it out. `stored` is the configuration an update writes over.
 */
async function applicationChecks(ns: string, c: WebhookConfig, stored?: WebhookConfig): Promise<Check[]> {
  const checks: Check[] = [];
  const uid = c.application;
  if (uid !== undefined) checks.push({ item: applicationTakesWebhooks(ns, uid), refusal: () => unknownApplication(uid) });
  if (uid !== undefined && (stored === undefined || stored.application !== uid)) {
    const caps = await namespaceCaps(ns);
    checks.push({ item: countAppWebhookIn(ns, uid, caps), refusal: () => applicationWebhookLimitExceeded(uid, caps['webhooks-per-application']) });
  }
  const left = stored?.application;
  if (left !== undefined && left !== uid) checks.push({ item: countAppWebhookOut(ns, left), refusal: () => new Error('a count down has no condition') });
  return checks;
}

/** Checks what needs I/O: the target's addresses (SSRF) and TLS files; 422 on the field. */
async function assertReachable(ns: string, c: Pick<WebhookConfig, 'url' | 'tls'>) {
  const why = await targetProblem(c.url);
  if (why) throw validationError([{ field: 'url', message: why }]);
  const tls = tlsProblem(c.tls, ns);
  if (tls) throw validationError([tls]);
}

/**
 * Who is reading: keys with the `manage` scope see the whole configuration (never the secret nor
 * the TLS client key); other keys see the name, filter, status and URL origin, nothing that can
 * hold a secret (DESIGN.md section 2; counters are on the status route). Writes need `manage`,
 * so their answers always show the whole configuration.
 */
export interface Reader {
  manage: boolean;
}
const WRITER: Reader = { manage: true };

/** The webhook as the API shows it to `reader`. */
function view(w: WebhookItem, reader: Reader, healthDefaults: NamespaceHealthDefaults) {
  const times = { created_at: isoTime(w.created_at), updated_at: isoTime(w.updated_at) };
  if (!reader.manage) return { name: w.name, ...configView(w.config, reader), ...statusView(w), ...times };
  const health = effectiveHealth(w.config, healthDefaults);
  return {
    name: w.name,
    ...configView(openedConfig(w), { ...reader, healthDefaults }),
    // Where the effective thresholds come from: the webhook's own, its namespace's, or the defaults.
    failure_threshold_source: health.failure_threshold.source,
    disable_after_source: health.disable_after.source,
    ...statusView(w),
    ...times,
  };
}

/** Shown for a header value that did not open (./storage/sealed.ts): never its stored form. */
const UNOPENABLE = '[cannot be opened: set it again]';

/** The configuration with each header value that did not open shown as {@link UNOPENABLE}. */
function openedConfig(w: WebhookItem): WebhookConfig {
  const bad = unopenedSecrets(w);
  if (!bad.size || !w.config.headers) return w.config;
  return { ...w.config, headers: Object.fromEntries(Object.entries(w.config.headers).map(([k, v]) => [k, bad.has(`headers.${k}`) ? UNOPENABLE : v])) };
}

/** `status` (active, failing, disabled), `disabled_reason` (user, health) and `disabled_at`. */
function statusView(w: WebhookItem) {
  const s = webhookStatusOf(w.config, w.health);
  return { status: s.status, disabled_reason: s.disabled_reason, disabled_at: s.disabled_at === null ? null : isoTime(s.disabled_at) };
}

function item(ns: string, name: string, config: WebhookConfig, secret: string, id: string, createdAt: number, now: number): WebhookItem {
  return { kind: 'WEBHOOK', id, name, namespace: ns, topic_filter: config.topic_filter, status: 'active', created_at: createdAt, config, secret, updated_at: now };
}

export async function createWebhook(ns: string, input: { name: string; config: WebhookConfig; secret?: string }, now: number) {
  await assertReachable(ns, input.config);
  const secret = input.secret ?? newSecret();
  const w = { ...item(ns, input.name, input.config, secret, newId(now), now, now), version: 1 };
  if (!(await storeWebhook(w, { ...webhookBindingSettings(w) }, await applicationChecks(ns, input.config)))) throw alreadyExists('WEBHOOK_ALREADY_EXISTS', `Webhook ${input.name}`);
  // The only answer that carries the secret (DESIGN.md section 9).
  return { ...view(w, WRITER, await namespaceHealthDefaults(ns)), secret };
}

export async function describeWebhook(ns: string, name: string, reader: Reader, owner?: string) {
  const [w, d] = await Promise.all([requireWebhook(ns, name, owner), namespaceHealthDefaults(ns)]);
  return view(w, reader, d);
}

export async function listWebhooks(ns: string, limit: number, offset: number, reader: Reader, application?: string) {
  const [{ items, total }, d] = await Promise.all([readWebhooks(ns, limit, offset, application), namespaceHealthDefaults(ns)]);
  return { items: items.map((w) => view(w, reader, d)), total };
}

/** Attempts of a PUT or PATCH that meets concurrent updates before it answers 409. */
const UPDATE_ATTEMPTS = 8;

/**
 * PUT and PATCH: replaces the configuration of the same incarnation (same id, same counters).
 * The stored secret stays unless a new one is given. `build` turns the stored item into the new
 * input (PUT ignores it but for the client key, PATCH merges into it). The write holds only if
 * the item is still the version `build` saw; otherwise the update is built again on the item as
 * it is now, so of two concurrent PATCHes neither change is lost.
 */
export async function updateWebhook(ns: string, name: string, build: (stored: WebhookItem) => { config: WebhookConfig; secret?: string }, now: number, opts: { enable?: (stored: WebhookConfig) => boolean; owner?: string } = {}) {
  for (let attempt = 1; ; attempt++) {
    const stored = await requireWebhook(ns, name, opts.owner);
    const next = build(stored);
    await assertReachable(ns, next.config);
    // `updated_at` orders the webhook's versions for the rate's slots (./storage/webhook-limits.ts:
    // the newest version numbers them), so it grows with each write: the write holds only on the
    // version read, and a PATCH that started first but lost the race (written again after a
    // later one) kept its older time, so the rate of the PATCH written over kept numbering the
    // slots: 21 requests in one second at a `rate_limit` of 2.
    const at = Math.max(now, Date.now(), stored.updated_at + 1);
    const w: WebhookItem & { version: number } = { ...item(ns, name, next.config, next.secret ?? stored.secret, stored.id, stored.created_at, at), version: (stored.version ?? 0) + 1 };
    // The rate's version moves only with the rate: waiting deliveries keep their slots otherwise.
    w.rate_of = (next.config.rate_limit ?? null) === (stored.config.rate_limit ?? null) ? rateVersion(stored) : at;
    Object.assign(w, keptRotation(stored, next.secret)); // extension: a rotated secret's grace period outlives a PUT or PATCH
    carryUnopened(stored, w); // a value that did not open stays as stored unless this request replaces it
    // Health outlives a PUT or PATCH, but `"enabled": true` sent as a change clears it (`enable`,
    // judged on the version written over): the owner re-enables a webhook health disabled, and
    // its circuit starts closed.
    if (stored.health && !opts.enable?.(stored.config)) w.health = stored.health;
    if (await replaceWebhook(w, { ...webhookBindingSettings(w) }, stored, await applicationChecks(ns, next.config, stored.config))) return view(w, WRITER, await namespaceHealthDefaults(ns));
    if (attempt >= UPDATE_ATTEMPTS) {
      throw new ApiError(409, 'CONFLICT', `Webhook ${name} is being changed by other requests at the same time; retry.`);
    }
    // Changed meanwhile (or deleted: the next read answers 404); a short random pause spreads
    // the writers that collided.
    await sleep(Math.random() * 25 * attempt);
  }
}

export async function deleteWebhook(ns: string, name: string, now: number, owner?: string) {
  // The owner is judged on the item the delete's condition (its id) holds to: never another's.
  const gone = await deleteResource<WebhookItem>(ns, 'WEBHOOK', name, now, (current) => {
    return leavesApplication(ns, ownedWebhook(current, name, owner));
  });
  if (!gone) throw webhookNotFound(name);
  await deleteWebhookStatus(ns, gone.id);
}

/** SPEC.md "Webhook status": counts per delivery; next_retry only while a retry is pending. */
export async function webhookStatus(ns: string, name: string, owner?: string) {
  const w = await requireWebhook(ns, name, owner);
  const { status: s, fold } = await readWebhookCounters(ns, w.id);
  // Counter items of writers idle for an hour go into the total, so reads stay small
  // (storage/webhook-counters.ts); a failure changes no count, and the next read tries again.
  if (fold) {
    await foldWriters(fold).catch((e: unknown) => logger.warn('webhook counter writers not folded; the next status read tries again', { namespace: ns, webhook: name, error: (e as Error).message }));
  }
  return {
    name: w.name,
    ...statusView(w),
    success_count: s.success_count ?? 0,
    failure_count: s.failure_count ?? 0,
    last_delivery: s.last_delivery ? isoTime(s.last_delivery) : null,
    last_error: s.last_error ?? null,
    next_retry: (s.pending_retries ?? 0) > 0 && s.next_retry ? isoTime(s.next_retry) : null,
    // Hooks the namespace's publish rate limit refused.
    hook_failure_count: s.hook_failure_count ?? 0,
    last_hook_error: s.last_hook_error ?? null,
  };
}

/** A topic a filter matches, for the synthetic message: wildcard levels become `test`. */
const sampleTopic = (filter: string) => filter.split('/').map((l) => (l === '+' || l === '#' ? 'test' : l)).join('/');

/**
 * `POST /webhooks/test`: one synthetic delivery with the default body, signed with a throwaway
 * secret, no retries, over the given TLS options as a delivery would use them. The answer never
 * includes the target's response body.
 */
export async function testWebhook(ns: string, input: { name: string; url: string; topic_filter: string; method: WebhookConfig['method']; tls?: WebhookConfig['tls'] }, now: number) {
  await assertReachable(ns, { url: input.url, tls: input.tls });
  const message: PublishedMessage = {
    message_id: newId(now),
    topic: sampleTopic(input.topic_filter),
    payload: JSON.stringify({ test: true, webhook: input.name }),
    content_type: 'application/json',
    properties: { webhook_test: 'true' },
    published_at: now,
    size: 0,
  };
  const config: WebhookConfig = { ...WEBHOOK_DEFAULTS, retry_count: 0, url: input.url, topic_filter: input.topic_filter, method: input.method, debug: false, log_requests: false, log_responses: false };
  const built = buildRequest(config, newSecret(), message, now);
  if ('tooLarge' in built) throw new Error('the synthetic test body cannot exceed the default max_payload_size');
  const r = await sendRequest({ url: input.url, method: input.method, headers: built.headers, body: built.body, timeoutSeconds: config.timeout, namespace: ns, ...(input.tls ? { tls: input.tls } : {}) });
  return { success: r.ok, status_code: r.status_code, response_time_ms: r.duration_ms, error: r.error };
}
