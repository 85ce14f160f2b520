/**
 * Replay (extension): `POST /webhooks/{name}/deliveries/{message_id}/replay` queues one new
 * delivery of a message, and `POST /webhooks/{name}/replay` one of every delivery that failed
 * since a time. The messages come from the delivery log's retained copies (kept 7 days after a
 * delivery failed; lambda/webhooks/storage/delivery-log.ts).
 *
 * A replay is an ordinary delivery job on the delivery queue with a `replay_id`: the delivery
 * function makes its first attempt and the retry workflow its retries, so the SSRF guard (at
 * connect time), the signatures (same `webhook-id`: the message id), the retry policy, the hooks
 * and the status counters all apply as they do to the publish's delivery. The replay id names its
 * retry workflow execution apart from the first delivery's. A message too large to travel in a
 * job goes by reference to its retained copy, which is then kept as long as the replay may need it.
 */
import { derivedId, newId } from '../core/rules/clock';
import { ApiError } from '../core/rules/errors';
import { isoTime } from '../core/rules/envelope';
import { MAX_BULK_REPLAY } from './rules/delivery-log';
import { INLINE_JOB_LIMIT_BYTES, jobBytes, STORED_MESSAGE_TTL_SECONDS, type DeliveryJob } from './rules/delivery';
import type { PublishedMessage } from '../core/rules/message';
import { extendRetained, failedDeliveriesSince, getManyRetained, getRetained, type RetainedMessage } from './storage/delivery-log';
import { claimReplay, markReplayQueued, releaseReplayClaims } from './storage/replay-marks';
import { getWebhook, type WebhookItem } from './storage/webhooks';
import { enqueueJobs } from './storage/delivery-queue';
import { SqsSendError } from '../core/adapters/sqs';
import { ownedWebhook, reachesWebhook } from './application-scope';

/**
 * What a replay asks of the webhook it read (a session's ownership, the key's scopes: the handler
 * says), judged on the read the replay acts on. Throws to refuse.
 */
export type ReplayCheck = (w: WebhookItem) => void;

async function requireWebhook(ns: string, name: string, check?: ReplayCheck): Promise<WebhookItem> {
  const w = ownedWebhook(await getWebhook(ns, name), name, undefined);
  check?.(w);
  return w;
}

const notRetained = (messageId: string) =>
  new ApiError(404, 'MESSAGE_NOT_FOUND', `No failed delivery of message ${messageId} to this webhook is retained for replay: only deliveries that ended in failure in the last 7 days are.`);

/**
 * The message of a replay job by reference: its retained copy (a job whose copy is gone fails
 * loudly, as a job whose stored message is gone does).
 */
export async function loadReplayMessage(job: DeliveryJob): Promise<PublishedMessage> {
  const id = 'message_ref' in job ? job.message_ref.message_id : job.message.message_id;
  const kept = await getRetained(job.namespace, job.webhook_id, id);
  if (!kept) throw new Error(`retained message ${id} of webhook ${job.webhook_name} not found for replay ${job.replay_id}`);
  return kept.message;
}

/** The job of a replay: the message inline, or by reference to its retained copy when too large. */
export function replayJob(w: Pick<WebhookItem, 'namespace' | 'id' | 'name'>, m: PublishedMessage, replayId: string): DeliveryJob {
  const target = { namespace: w.namespace, webhook_id: w.id, webhook_name: w.name, replay_id: replayId };
  const inline = { ...target, message: m };
  return jobBytes(inline) > INLINE_JOB_LIMIT_BYTES ? { ...target, message_ref: { message_id: m.message_id } } : inline;
}

/**
 * The replay id of a failure's bulk replay: derived from the webhook, the message and the time
 * it failed, so every job that replays one failure is one delivery (one record, one claim, one
 * retry workflow name) however many times a lost answer made it queued. A later failure of the
 * message (its replay failed too) gets a new id.
 */
const bulkReplayId = (webhookId: string, k: Pick<RetainedMessage, 'message' | 'failed_at'>) =>
  derivedId(k.failed_at, `bulk-replay ${webhookId} ${k.message.message_id} ${k.failed_at}`);

/** Keeps the retained copies that jobs by reference load until those jobs can no longer run. */
async function keepReferenced(w: WebhookItem, jobs: DeliveryJob[], now: number) {
  const refs = jobs.flatMap((j) => ('message_ref' in j ? [j.message_ref.message_id] : []));
  await Promise.all(refs.map((id) => extendRetained(w.namespace, w.id, id, now + STORED_MESSAGE_TTL_SECONDS * 1000)));
}

/**
 * Replays one message; 404 when no failed delivery of it is retained, or when the webhook no
 * longer carries it: a webhook of an application replays only messages addressed to it, whatever
 * it received before the platform moved it (./application-scope.ts).
 */
export async function replayOne(ns: string, name: string, messageId: string, now: number, check?: ReplayCheck) {
  const w = await requireWebhook(ns, name, check);
  const kept = await getRetained(ns, w.id, messageId);
  if (!kept || !reachesWebhook(kept.message, w.config.application)) throw notRetained(messageId);
  const replayId = newId(now);
  const job = replayJob(w, kept.message, replayId);
  await keepReferenced(w, [job], now);
  await enqueueJobs([job]);
  await markReplayQueued(ns, w.id, [messageId], now);
  return { message_id: messageId, replay_id: replayId, queued_at: isoTime(now) };
}

/**
 * Replays every delivery that ended in failure at or after `sinceMs` and has not been delivered
 * by a replay since (at most {@link MAX_BULK_REPLAY} per call, oldest first); answers how many
 * were queued and, when more are left, the `since` to call again with.
 */
export async function replayFailedSince(ns: string, name: string, sinceMs: number, now: number, max = MAX_BULK_REPLAY, check?: ReplayCheck) {
  const w = await requireWebhook(ns, name, check);
  const page = await failedDeliveriesSince(ns, w.id, sinceMs, max, now);
  const { messageIds } = page;
  const kept = await getManyRetained(ns, w.id, messageIds);
  // Each message is claimed before its job is queued, conditionally on no replay queued since its
  // latest failure (pages overlap, see failedDeliveriesSince; a message can have several failed
  // entries; and another bulk replay may read the same page at once): one job per failure.
  const claimId = newId(now);
  const candidates = messageIds.flatMap((id) => {
    const k = kept.get(id);
    return k && k.recovered_at === undefined && reachesWebhook(k.message, w.config.application) ? [k] : [];
  });
  // Every claim is settled before going on: one that failed must not leave the others claimed and
  // never queued (another bulk replay at once, refused by them, queues none of them either).
  const claimed = await Promise.allSettled(candidates.map((k) => claimReplay(ns, w.id, k.message.message_id, k.failed_at, now, claimId)));
  const jobs = candidates.filter((_, i) => claimed[i].status === 'fulfilled' && claimed[i].value).map((k) => replayJob(w, k.message, bulkReplayId(w.id, k)));
  const idOf = (j: DeliveryJob) => ('message_ref' in j ? j.message_ref.message_id : j.message.message_id);
  try {
    await keepReferenced(w, jobs, now);
    await enqueueJobs(jobs);
  } catch (e) {
    // What SQS did not store is given back, so the next bulk replay queues it. A send whose
    // answer was lost may have been stored all the same: the job queued again then is the same
    // replay ({@link bulkReplayId}), and of the two only one POSTs (./replay-claim.ts).
    const unsent = e instanceof SqsSendError ? e.unsent.map((i) => jobs[i]) : jobs;
    await releaseReplayClaims(ns, w.id, unsent.map(idOf), claimId);
    throw e;
  }
  const failedClaims = candidates.filter((_, i) => claimed[i].status === 'rejected');
  if (failedClaims.length) {
    // A claim whose call failed may still have been written (its answer lost): given back if it is
    // this call's, and the call fails (503), so the caller sends it again and that queues them. The
    // others are queued: the repeat finds them claimed and skips them.
    await releaseReplayClaims(ns, w.id, failedClaims.map((k) => k.message.message_id), claimId);
    throw (claimed.find((c) => c.status === 'rejected') as PromiseRejectedResult).reason;
  }
  // A page that found only messages already queued moves on past them (else a caller looping on
  // next_since would read the same page until its entries are a minute old).
  const nextSinceMs = jobs.length === 0 && messageIds.length > 0 ? page.unclampedMs : page.nextSinceMs;
  return { queued: jobs.length, next_since: nextSinceMs === undefined ? null : isoTime(nextSinceMs) };
}
