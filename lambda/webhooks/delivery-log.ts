/**
 * The webhook delivery log (extension): one entry per attempt, collected by the delivery function
 * and the retry workflow (./deliver.ts) into pages written when the batch or Task is done, the
 * attempt that ends a delivery also carried by its record (storage/delivery-log.ts), and the list behind
 * `GET /webhooks/{name}/deliveries`. A delivery that ends in failure also keeps its message for
 * replay (./replay.ts); a replay that succeeds marks it recovered.
 *
 * The log never stands in the way of a delivery: a write that fails is logged and dropped, never
 * thrown (throwing would make SQS or Step Functions run the attempt, and POST, again).
 */
import { mayRetry } from '../domain/backoff';
import { notFound } from '../domain/errors';
import { isoTime } from '../domain/envelope';
import { encodeCursor, type AttemptEntry, type ListQuery } from '../domain/delivery-log';
import { jobMessageId, type DeliveryJob } from '../domain/delivery';
import type { PublishedMessage } from '../domain/message';
import type { WebhookConfig } from '../domain/webhooks';
import type { DeliveryResult } from '../adapters/http-delivery';
import { entryAt, listAttempts, logLater, markRecovered, putAttemptItem, putRetained, type ListedAttempt } from '../storage/delivery-log';
import type { CarriedEntry } from '../storage/webhook-deliveries';
import { getWebhook } from '../storage/webhooks';
import { logger } from '../observability';

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
 * ends a delivery that is not a replay): the caller passes it to the record, and hands it to
 * {@link keepAttemptApart} if another run recorded the end first. Every other attempt is written
 * under its message's key at once.
 */
export async function logAttempt(job: DeliveryJob, c: WebhookConfig, message: PublishedMessage, attempt: number, r: DeliveryResult & { tooLarge?: boolean; stopped?: boolean }): Promise<CarriedEntry | undefined> {
  const now = Date.now();
  const entry: CarriedEntry = { ...attemptEntry(job, c, attempt, r, now), at: '' };
  entry.at = entryAt(entry);
  const carried = entry.final && job.replay_id === undefined;
  logLater(job.namespace, job.webhook_id, entry);
  try {
    await Promise.all([
      carried ? undefined : putAttemptItem(job.namespace, job.webhook_id, entry),
      entry.final && !r.ok ? putRetained(job.namespace, job.webhook_id, message, now) : undefined,
      r.ok && job.replay_id ? markRecovered(job.namespace, job.webhook_id, entry.message_id, now) : undefined,
    ]);
  } catch (e) {
    logger.error('webhook delivery log entry not written', { namespace: job.namespace, webhook: job.webhook_name, message_id: entry.message_id, attempt, error: (e as Error).message });
  }
  return carried ? entry : undefined;
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

const view = ({ at: _at, ...e }: ListedAttempt) => ({ ...e, attempted_at: isoTime(e.attempted_at) });

/** `GET /webhooks/{name}/deliveries`: a page of attempts, newest first. */
export async function listDeliveries(ns: string, name: string, q: ListQuery) {
  const w = await getWebhook(ns, name);
  if (!w) throw notFound('WEBHOOK_NOT_FOUND', `Webhook ${name}`);
  const { entries, next } = await listAttempts(ns, w.id, q);
  return { deliveries: entries.map(view), next_cursor: next === undefined ? null : encodeCursor(next), limit: q.limit };
}
