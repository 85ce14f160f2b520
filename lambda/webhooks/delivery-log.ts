/**
 * The webhook delivery log (extension): one entry per attempt, collected by the delivery function
 * and the retry workflow (./deliver.ts) into pages written when the batch or Task is done, the
 * attempt that ends a delivery also carried by its record (storage/delivery-log.ts), and the list behind
 * `GET /webhooks/{name}/deliveries`. A delivery that ends in failure also keeps its message for
 * replay (./replay.ts); a replay that succeeds marks it recovered.
 *
 * The log never stands in the way of a delivery: a write that fails is logged and dropped, never
 * thrown (throwing would make SQS or Step Functions run the attempt, and POST, again). Except
 * what a bulk replay needs of a delivery that ended in failure (its final entry in the pages, its
 * retained copy): each write is tried again like the record's, and one that still failed is
 * reported by {@link flushLogPages} after the run, which then fails the job or Task once the record
 * is written. Run again, it reads the record (no POST) and {@link keepAgain} writes them.
 */
import { randomUUID } from 'node:crypto';
import { mayRetry } from './rules/backoff';
import { isoTime } from '../core/rules/envelope';
import { encodeCursor, type AttemptEntry, type ListQuery } from './rules/delivery-log';
import { jobMessageId, type DeliveryJob } from './rules/delivery';
import type { PublishedMessage } from '../core/rules/message';
import type { WebhookConfig } from './rules/webhooks';
import type { DeliveryResult } from './storage/http-delivery';
import { isRetryableDependencyFailure, withRetries } from '../core/rules/dependency-errors';
import { entryAt, flushLog, listAttempts, logLater, LogPagesNotWritten, markRecovered, putAttemptItem, putRetained, type ListedAttempt } from './storage/delivery-log';
import { releaseHeld, takeUncounted, type CarriedEntry, type DeliveryRecord } from './storage/webhook-deliveries';
import { countApart, countLater, deliveryCountId } from './storage/webhook-counters';
import { getWebhook } from './storage/webhooks';
import { logger } from '../core/observability';
import { addressOf, ownedWebhook } from './application-scope';
import { keyOf } from './delivery-key';

/**
 * The entry of one attempt. Final: it succeeded, its body was too large (never retried), or its
 * retries are used up, which is exactly when ./deliver.ts ends the delivery.
 */
export function attemptEntry(job: DeliveryJob, c: Pick<WebhookConfig, 'retry_count'>, attempt: number, r: DeliveryResult & { tooLarge?: boolean; stopped?: boolean }, endedAt: number): AttemptEntry {
  return {
    message_id: jobMessageId(job),
    attempt,
    attempted_at: endedAt - r.duration_ms,
    duration_ms: r.duration_ms,
    status_code: r.status_code ?? null,
    outcome: r.ok ? 'succeeded' : 'failed',
    error: r.ok ? null : (r.error ?? 'failed'),
    // `stopped`: no request was made because health disabled the webhook (./endpoint-limits.ts).
    final: r.ok || Boolean(r.tooLarge) || Boolean(r.stopped) || !mayRetry(c, attempt),
    replay: job.replay_id !== undefined,
  };
}

/**
 * Records an attempt (and, for a delivery that ended in failure, keeps its message). Never throws.
 * The entry goes into this run's pages (written at the end of the batch or Task, ./deliver.ts
 * `flushDeliveryWrites`). Returns it when the delivery's record is to carry it (the attempt that
 * ends a delivery): the caller passes it to the record, and hands it to
 * {@link keepAttemptApart} if another run recorded the end first. Every other attempt is written
 * under its message's key at once.
 */
export async function logAttempt(job: DeliveryJob, c: WebhookConfig, message: PublishedMessage, attempt: number, r: DeliveryResult & { tooLarge?: boolean; stopped?: boolean }): Promise<CarriedEntry | undefined> {
  const now = Date.now();
  const to = addressOf(message); // a portal session lists only its application's entries
  const entry: CarriedEntry = { ...attemptEntry(job, c, attempt, r, now), ...(to !== undefined ? { application: to } : {}), at: '' };
  entry.at = entryAt(entry);
  // A replay's entries are items of their own (the list by message reads only the first
  // delivery's record); its final one is also carried by its record, for {@link keepAgain}.
  const carried = entry.final && job.replay_id === undefined;
  logLater(job.namespace, job.webhook_id, entry);
  const written = await Promise.allSettled([
    carried ? undefined : withRetries(() => putAttemptItem(job.namespace, job.webhook_id, entry), LOG_RETRIES),
    r.ok && job.replay_id ? withRetries(() => markRecovered(job.namespace, job.webhook_id, entry.message_id, now), LOG_RETRIES) : undefined,
    entry.final && !r.ok ? withRetries(() => putRetained(job.namespace, job.webhook_id, message, now), LOG_RETRIES) : undefined,
  ]);
  for (const [i, w] of written.entries()) {
    if (w.status === 'fulfilled') continue;
    logger.error('webhook delivery log entry not written', { namespace: job.namespace, webhook: job.webhook_name, message_id: entry.message_id, attempt, error: (w.reason as Error)?.message });
    if (i === 2) unkept.add(unkeptId(job.namespace, job.webhook_id, entry.message_id));
  }
  return entry.final ? entry : undefined;
}

/** Each write of the log is tried about 3 s beyond the SDK's retries while the failure may pass (as the record's is). */
const LOG_RETRIES = { tries: 6, firstDelayMs: 100, retryIf: isRetryableDependencyFailure };

/** The deliveries of this run that ended in failure and are not kept for replay (see the top). */
let unkept = new Set<string>();

/** The id {@link flushLogPages} names a delivery by: its namespace, webhook incarnation and message. */
export const unkeptId = deliveryCountId;

/** Whether this run could not keep the retained copy of the job's failure (its stored message is then held: ./deliver.ts). */
export const copyRefused = (job: DeliveryJob): boolean => unkept.has(unkeptId(job.namespace, job.webhook_id, jobMessageId(job)));

/**
 * Writes this run's log pages and answers the deliveries of this run that ended in failure but
 * whose page or retained copy could not be written ({@link unkeptId}), to be failed by the caller
 * (the job or Task runs again, finds its record and {@link keepAgain} writes them).
 */
export async function flushLogPages(): Promise<Set<string>> {
  const lost = unkept;
  unkept = new Set();
  try {
    await flushLog();
  } catch (e) {
    logger.error('webhook delivery log pages not written', { error: (e as Error)?.message });
    if (e instanceof LogPagesNotWritten) for (const f of e.lostFailures) lost.add(unkeptId(f.ns, f.webhookId, f.messageId));
  }
  return lost;
}

/**
 * A run that found the record of a delivery that ended in failure writes again what a bulk replay
 * needs of it, from the entry the record carries: its final entry into this run's pages (a page
 * written twice shows an attempt twice: the list leaves the repeat out) and its retained copy,
 * unless a copy of this failure or a later one is kept. Noted like {@link logAttempt}'s when it fails.
 */
export async function keepAgain(job: DeliveryJob, rec: DeliveryRecord, message: () => Promise<PublishedMessage>): Promise<void> {
  const entry = rec.log;
  if (rec.outcome !== 'failed' || !entry?.final) return;
  logLater(job.namespace, job.webhook_id, entry);
  let m: PublishedMessage;
  try {
    m = await message();
  } catch (e) {
    // A message stored apart is released once its delivery ended (held while its copy is not
    // kept, ../storage/webhook-deliveries.ts `stored_held`): nothing left to keep.
    logger.error('message of a failed webhook delivery not loaded: no copy kept for replay', { namespace: job.namespace, webhook: job.webhook_name, message_id: entry.message_id, error: (e as Error).message });
    return countUncounted(job, rec, false);
  }
  try {
    await withRetries(() => putRetained(job.namespace, job.webhook_id, m, entry.attempted_at + entry.duration_ms, { ifOlder: true }), LOG_RETRIES);
    await countUncounted(job, rec, true);
    // The copy is kept: the stored message the failure held is released (never thrown: its TTL ends it).
    if (rec.stored_held) await releaseHeld(keyOf(job)).catch((e) => logger.warn('held webhook message not released; its TTL deletes it', { namespace: job.namespace, message_id: entry.message_id, error: (e as Error).message }));
  } catch (e) {
    logger.error('webhook delivery log entry not written', { namespace: job.namespace, webhook: job.webhook_name, message_id: entry.message_id, attempt: entry.attempt, error: (e as Error).message });
    unkept.add(unkeptId(job.namespace, job.webhook_id, entry.message_id));
  }
}

/**
 * Counts a failure the run that recorded it left uncounted (./flush.ts), once: the note on its
 * record is taken by one conditional write. `apart`: held until this run's pages are written,
 * like a failure just recorded; otherwise (nothing left to keep) counted with the next flush.
 */
async function countUncounted(job: DeliveryJob, rec: DeliveryRecord, apart: boolean): Promise<void> {
  if (!rec.uncounted) return;
  const k = keyOf(job);
  // One id for every try of this take: a try that meets the take an earlier, applied try made is this run's.
  const run = randomUUID();
  const note = rec.uncounted;
  const d = await withRetries(() => takeUncounted(k, run, note), LOG_RETRIES);
  if (!d) return;
  if (apart) countApart({ id: unkeptId(k.namespace, k.webhookId, k.messageId), ref: k, ns: k.namespace, webhookId: k.webhookId, d });
  else countLater(k.namespace, k.webhookId, d);
}

/** The attempt a record was to carry, when another run recorded the delivery's end first. Never throws. */
export async function keepAttemptApart(job: DeliveryJob, entry: CarriedEntry | undefined): Promise<void> {
  if (!entry) return;
  try {
    await putAttemptItem(job.namespace, job.webhook_id, entry);
  } catch (e) {
    logger.error('webhook delivery log entry not written', { namespace: job.namespace, webhook: job.webhook_name, message_id: entry.message_id, attempt: entry.attempt, error: (e as Error).message });
  }
}

const view = ({ at: _at, application: _to, ...e }: ListedAttempt) => ({ ...e, attempted_at: isoTime(e.attempted_at) });

/**
 * `GET /webhooks/{name}/deliveries`: a page of attempts, newest first. `owner`, a portal session's
 * application, must own the webhook as this read finds it, and sees only the attempts of messages
 * addressed to it: what the webhook carried before the platform gave it to that application stays
 * the platform's (./application-scope.ts). Its page may then hold fewer than `limit` entries.
 */
export async function listDeliveries(ns: string, name: string, q: ListQuery, owner?: string) {
  const w = ownedWebhook(await getWebhook(ns, name), name, owner);
  const { entries, next } = await listAttempts(ns, w.id, q);
  const shown = owner === undefined ? entries : entries.filter((e) => e.application === owner);
  return { deliveries: shown.map(view), next_cursor: next === undefined ? null : encodeCursor(next), limit: q.limit };
}
