/**
 * The record of each webhook delivery (keys.ts `webhookDelivery`: one webhook incarnation, one
 * message), so a delivery's bookkeeping happens once however often its job or Task runs. A
 * delivery's end is recorded by one conditional PutItem of its record (one write unit: no
 * transaction), and only the run whose write succeeded moves the
 * counters (./webhook-counters.ts, summed per batch), so:
 *
 * - a job SQS hands out again, or a Task the retry workflow runs again after a failure, reads the
 *   record and carries on from it instead of POSTing again a delivery that already ended;
 * - the counters move once per delivery, whichever run records it first;
 * - `ended` says the hook (on_success, on_failure, send_to_dlq) has run, so a run repeated after
 *   a failed hook runs it again, and one repeated after that does not.
 *
 * The record of a delivery whose first attempt ended it also carries that attempt's delivery-log
 * entry (`log`), so the hot path writes no log item of its own per delivery (./delivery-log.ts).
 *
 * The write that ends a delivery (`ended`) is followed by the release of its stored message, if it
 * has one, and the message is deleted when its last delivery ended (./webhook-messages.ts). An
 * invocation that dies between the two leaves the message to its TTL.
 *
 * What is not covered: a POST whose answer arrived but whose record could not be written at all
 * (storage down) is sent again by the redelivery; delivery stays at least once.
 */
import { randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { STORED_MESSAGE_TTL_SECONDS } from '../rules/delivery';
import type { AttemptEntry } from '../rules/delivery-log';
import { batchGet } from '../../core/storage/batch';
import { ddb, isConditionFailed, tableName } from '../../core/storage/client';
import { ttlSeconds } from '../../core/storage/keys';
import { countApart, countLater, deliveryCountId, type CountDelta } from './webhook-counters';
import { recordKey, sendClaimKey, type DeliveryKey } from './webhook-delivery-item';
import { settleHandoff } from './webhook-delivery-once';
import { deleteIfUnreferenced, releaseMessageUpdate } from './webhook-messages';

export type { DeliveryKey } from './webhook-delivery-item';

type FinalOutcome = 'success' | 'failed' | 'dropped';

export interface DeliveryRecord {
  /** `retrying`: the retry workflow owns the delivery; the others: it ended. */
  outcome: 'retrying' | FinalOutcome;
  attempts: number;
  /** The receiver's answer of the successful attempt (for `{{.response}}`), at most 4 KiB. */
  response?: string;
  error?: string;
  /** The hook that applies has run (or none applies): nothing is left to do. */
  ended?: boolean;
  /** The delivery-log entry of the attempt that ended the delivery, when the record carries it. */
  log?: CarriedEntry;
  /**
   * While `retrying`: the workflow handed the retry after attempt `queued` to the delivery queue
   * ({@link handRetry}); the job carrying that count is the one that may make the next attempt.
   */
  queued?: number;
  /** The counts of the hand-off the record notes, until a take counts them (./webhook-delivery-once.ts `takeHandoff`). */
  handoff_uncounted?: CountDelta;
  /** A failure not counted yet: its page or retained copy was not kept by the run that recorded it ({@link markUncounted}). */
  uncounted?: CountDelta;
  /**
   * The delivery ended in failure and its retained copy was not kept: its stored message (a job
   * by reference) is held, not released, until a run keeps the copy ({@link releaseHeld}).
   */
  stored_held?: boolean;
}

/** What a run expects the record to be before it writes: absent, or owned by the workflow. */
export type RecordFrom = 'none' | 'retrying';

const key = recordKey;
const claimKey = sendClaimKey;

/** After the write that ended the delivery: release its stored message, and delete it if that was its last delivery. */
async function release(k: DeliveryKey, ends: boolean, now: number) {
  if (!k.stored || !ends) return;
  try {
    await ddb().send(new UpdateCommand(releaseMessageUpdate(k.namespace, k.messageId, now)));
    await deleteIfUnreferenced(k.namespace, k.messageId);
  } catch {
    // The record is written and counted: a caller retrying it would count it again. The stored
    // message stays until its TTL (STORED_MESSAGE_TTL_SECONDS) instead, which costs storage only.
  }
}

/** The record outlives every run that could still need it: any job, redelivery or retry. */
const ttl = (now: number) => ttlSeconds(now) + STORED_MESSAGE_TTL_SECONDS;

const expecting = (from: RecordFrom) =>
  from === 'none'
    ? { ConditionExpression: 'attribute_not_exists(pk)' }
    : { ConditionExpression: 'outcome = :retrying', ExpressionAttributeValues: { ':retrying': 'retrying' } };

/** One conditional write of the record alone; false when its condition failed. */
async function write(cmd: PutCommand | UpdateCommand): Promise<boolean> {
  try {
    if (cmd instanceof PutCommand) await ddb().send(cmd);
    else await ddb().send(cmd);
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
}

/**
 * Puts a record under its condition, once. The item carries a fresh `write_id`: when the SDK
 * retries after a lost answer (the first attempt was applied), the retry meets the record it wrote
 * itself and fails its condition; one consistent read (only then) tells that apart from another
 * run's record, so the delivery is counted once and not taken for someone else's. A caller that
 * retries the whole write passes one `writeId` for every try.
 */
async function putOnce(item: Record<string, unknown>, from: RecordFrom, writeId: string = randomUUID()): Promise<boolean> {
  if (await write(new PutCommand({ TableName: tableName('meta'), Item: { ...item, write_id: writeId }, ...expecting(from) }))) return true;
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: { pk: item.pk, sk: item.sk }, ConsistentRead: true }));
  return out.Item?.write_id === writeId;
}

/** The record, read strongly consistently (it may have been written a moment ago). */
export async function readDelivery(k: DeliveryKey): Promise<DeliveryRecord | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: key(k), ConsistentRead: true }));
  return out.Item as DeliveryRecord | undefined;
}

/**
 * The records of many deliveries (a delivery batch's), read strongly consistently with
 * BatchGetItem (100 keys a call, unprocessed keys retried): the same 1 read unit per record as
 * {@link readDelivery}, in one call instead of one per job. Keyed by {@link deliveryRecordId};
 * a delivery without a record is absent.
 */
export async function readDeliveries(ks: DeliveryKey[]): Promise<Map<string, DeliveryRecord>> {
  const keys = [...new Map(ks.map((k) => [deliveryRecordId(k), key(k)])).values()];
  if (!keys.length) return new Map();
  const items = await batchGet<DeliveryRecord & { pk: string }>(tableName('meta'), keys, true);
  return new Map(items.map((i) => [i.pk, i]));
}

/** The identity of a delivery's record (its partition key), for {@link readDeliveries}' answer. */
export const deliveryRecordId = (k: DeliveryKey): string => key(k).pk;

/**
 * Hands the delivery to the retry workflow: the record says `retrying`, noting the hand-off of
 * the retry after attempt `queued` (only a job carrying that count attempts it), and carries the
 * counts of the hand-off (one more pending retry, its time and error: `handoff_uncounted`), which
 * the run that starts the execution takes once (./webhook-delivery-once.ts `takeHandoff`). False (and nothing written)
 * when the delivery already has a record.
 */
export async function recordRetrying(k: DeliveryKey, a: { nextRetry: number; error: string; now: number; queued: number }): Promise<boolean> {
  const counts = handoffCounts({ ...a, first: true });
  return putOnce({ ...key(k), outcome: 'retrying', attempts: a.queued, queued: a.queued, error: a.error, handoff_uncounted: counts, ttl: ttl(a.now) }, 'none');
}

/** The counts of a hand-off: the first one adds a pending retry (its end takes it back), every one shows its next retry and error. */
export const handoffCounts = (a: { nextRetry: number; error: string; now: number; first: boolean }): CountDelta => ({ pending: a.first ? 1 : 0, at: a.now, nextRetry: a.nextRetry, error: { at: a.now, message: a.error } });

/**
 * The queued retry after attempt `queued` made its attempt and hands the next to a workflow: the
 * note moves on to `attempts`, so a copy of its job received later (SQS delivers at least once)
 * does not POST again, and only the next retry job attempts; the record carries the hand-off's
 * counts as {@link recordRetrying} does. False when the record moved on already.
 */
export async function advanceRetry(k: DeliveryKey, queued: number, attempts: number, a: { nextRetry: number; error: string; now: number }): Promise<boolean> {
  return write(
    new UpdateCommand({
      TableName: tableName('meta'),
      Key: key(k),
      UpdateExpression: 'SET attempts = :a, queued = :a, #e = :e, handoff_uncounted = :d',
      ConditionExpression: 'outcome = :retrying AND queued = :q',
      ExpressionAttributeNames: { '#e': 'error' },
      ExpressionAttributeValues: { ':a': attempts, ':q': queued, ':retrying': 'retrying', ':e': a.error, ':d': handoffCounts({ ...a, first: false }) },
    }),
  );
}

/** The attempt entry a record carries (./delivery-log.ts), with its time key. */
export type CarriedEntry = AttemptEntry & { at: string };

/**
 * Records how the delivery ended and counts it, if the record is still what `from` says. False
 * (nothing written) when it is not: the caller reads the record again and decides. `log` is the
 * delivery-log entry of the attempt that ended it, carried by the record.
 */
export async function recordFinal(
  k: DeliveryKey,
  o: { ok: boolean; error?: string; response?: string; attempts: number; ended: boolean; now: number; log?: CarriedEntry; holdStored?: boolean },
  from: RecordFrom,
  writeId?: string,
): Promise<boolean> {
  // The rerun that keeps the retained copy loads the message from its store (../webhooks/delivery-log.ts `keepAgain`).
  const hold = !o.ok && Boolean(o.holdStored && k.stored);
  const item: DeliveryRecord & Record<string, unknown> = {
    ...key(k),
    outcome: o.ok ? 'success' : 'failed',
    attempts: o.attempts,
    // The response is kept only for a hook still to run ({{.response}}): an ended record never needs it.
    ...(o.ok ? (o.ended ? {} : { response: o.response ?? '' }) : { error: o.error ?? 'failed' }),
    ...(o.ended ? { ended: true } : {}),
    ...(o.log ? { log: o.log } : {}),
    ...(hold ? { stored_held: true } : {}),
    ttl: ttl(o.now),
  };
  // The pending retry this end gives back is counted first, if no take did yet.
  if (from === 'retrying') await settleHandoff(k);
  const done = await putOnce(item, from, writeId);
  if (!done) return false;
  const delta: CountDelta = {
    ...(o.ok ? { success: 1, successAt: o.now } : { failure: 1, error: { at: o.now, message: o.error ?? 'failed' } }),
    pending: from === 'retrying' ? -1 : 0,
    at: o.now,
  };
  // A failure counts only once its log page and retained copy are kept (../webhooks/flush.ts).
  if (o.ok) countLater(k.namespace, k.webhookId, delta);
  else countApart({ id: deliveryCountId(k.namespace, k.webhookId, k.messageId), ref: k, ns: k.namespace, webhookId: k.webhookId, d: delta });
  await release(k, o.ended && !hold, o.now);
  return true;
}

/**
 * Records a delivery abandoned because its webhook was deleted or disabled; a delivery the
 * workflow held gives its pending retry back (when the webhook's counters still exist).
 */
export async function recordDropped(k: DeliveryKey, o: { releasePending: boolean; now: number }, from: RecordFrom): Promise<boolean> {
  if (o.releasePending && from === 'retrying') await settleHandoff(k);
  const done = await putOnce({ ...key(k), outcome: 'dropped', attempts: 0, ended: true, ttl: ttl(o.now) }, from);
  if (!done) return false;
  if (o.releasePending && from === 'retrying') countLater(k.namespace, k.webhookId, { pending: -1 });
  await release(k, true, o.now);
  return true;
}

/**
 * Marks the hook of an ended delivery as run (and releases its stored message, unless a failure
 * holds it: {@link releaseHeld}); false when another run marked it first.
 */
export async function markEnded(k: DeliveryKey, now = Date.now()): Promise<boolean> {
  try {
    const out = await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: key(k),
        UpdateExpression: 'SET ended = :true REMOVE #response',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(ended)',
        ExpressionAttributeNames: { '#response': 'response' },
        ExpressionAttributeValues: { ':true': true },
        ReturnValues: 'ALL_NEW',
      }),
    );
    if (!out.Attributes?.stored_held) await release(k, true, now);
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
}

/**
 * Gives up the hold a failure put on its stored message ({@link DeliveryRecord.stored_held}) once
 * its retained copy is kept: the flag is taken by one conditional REMOVE, and the message is
 * released by whichever of this and {@link markEnded} comes second (each sees the other's write:
 * writes to one item are applied one after the other), so once. A take whose answer was lost
 * leaves the message to its TTL (STORED_MESSAGE_TTL_SECONDS): storage only.
 */
export async function releaseHeld(k: DeliveryKey, now = Date.now()): Promise<void> {
  try {
    const out = await ddb().send(
      new UpdateCommand({ TableName: tableName('meta'), Key: key(k), UpdateExpression: 'REMOVE stored_held', ConditionExpression: 'attribute_exists(stored_held)', ReturnValues: 'ALL_NEW' }),
    );
    if (out.Attributes?.ended) await release(k, true, now);
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
  }
}

/** What {@link claimSend} answers: this run may POST, or another holds the POST until `heldUntil`. */
export type SendClaim = { mine: true } | { mine: false; heldUntil: number };

/**
 * Claims the POST of a delivery until `untilMs` (a small item beside its record, 1 write unit):
 * written when no claim is held or the one held has lapsed, so of two copies of a job handled at
 * once exactly one POSTs. A refusal that meets this run's own claim (the SDK sent the write again
 * after its answer was lost) is a claim, told by the item the refusal returns
 * (`ReturnValuesOnConditionCheckFailure`,
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html).
 */
export async function claimSend(k: DeliveryKey, claimId: string, now: number, untilMs: number): Promise<SendClaim> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: claimKey(k),
        UpdateExpression: 'SET #u = :until, claim = :c, #t = :t',
        ConditionExpression: 'attribute_not_exists(pk) OR #u < :now',
        ExpressionAttributeNames: { '#u': 'until', '#t': 'ttl' },
        ExpressionAttributeValues: { ':until': untilMs, ':c': claimId, ':now': now, ':t': ttl(now) },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { mine: true };
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    // The refusal's item is in the low-level attribute-value format (`{ claim: { S } }`).
    const old = (e as { Item?: { claim?: { S?: string }; until?: { N?: string } } }).Item;
    return old?.claim?.S === claimId ? { mine: true } : { mine: false, heldUntil: Number(old?.until?.N ?? untilMs) };
  }
}

/** Gives back a claim of {@link claimSend} that this run took and will not POST on (throws only on a failure to retry; refused: held by another run, nothing to do). */
export async function releaseSend(k: DeliveryKey, claimId: string): Promise<void> {
  try {
    await ddb().send(new DeleteCommand({ TableName: tableName('meta'), Key: claimKey(k), ConditionExpression: 'claim = :c', ExpressionAttributeValues: { ':c': claimId } }));
  } catch (e) {
    // Held by another run since (or given back already, its answer lost): nothing to give back.
    if (!isConditionFailed(e)) throw e;
  }
}

/**
 * Notes on the record of a delivery that ended in failure that its counts were not written (its
 * log page or retained copy was not kept): the run that keeps them counts it ({@link takeUncounted}).
 */
export async function markUncounted(k: DeliveryKey, d: CountDelta): Promise<void> {
  await ddb().send(
    new UpdateCommand({
      TableName: tableName('meta'),
      Key: key(k),
      UpdateExpression: 'SET uncounted = :d',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':d': d },
    }),
  );
}

/**
 * Takes the counts {@link markUncounted} left on the record, for one run only: a conditional
 * REMOVE answers them (`UPDATED_OLD`) to the run whose write removed them, undefined to any other.
 * The write also leaves `uncounted_taken`: `run` (the caller's id, one for every try of its take)
 * and `d`, the counts as the caller read them on the record (the note is written once, by the run
 * that recorded the failure). A try refused because an earlier try of the same run was applied and its
 * answer lost (the SDK sends it again) finds its own id in the item the refusal carries
 * (`ReturnValuesOnConditionCheckFailure: ALL_OLD`, no read cost,
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html) and takes
 * the counts it left there. One write, as before: 1 write unit for a record under 1 KB (a refused
 * condition costs one too), the attribute adds some 60 bytes and goes with the record's TTL.
 */
export async function takeUncounted(k: DeliveryKey, run: string, read: CountDelta): Promise<CountDelta | undefined> {
  try {
    const out = await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: key(k),
        UpdateExpression: 'REMOVE uncounted SET uncounted_taken = :taken',
        ConditionExpression: 'attribute_exists(uncounted)',
        ExpressionAttributeValues: { ':taken': { run, d: read } },
        ReturnValues: 'UPDATED_OLD',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return out.Attributes?.uncounted as CountDelta | undefined;
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    // The refusal's item is in the low-level attribute-value format.
    const item = (e as { Item?: Record<string, AttributeValue> }).Item;
    const old = item ? (unmarshall(item) as { uncounted_taken?: { run?: string; d?: CountDelta } }) : undefined;
    return old?.uncounted_taken?.run === run ? old.uncounted_taken.d : undefined;
  }
}
