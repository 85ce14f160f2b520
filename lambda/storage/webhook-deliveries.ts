/**
 * The record of each webhook delivery (keys.ts `webhookDelivery`: one webhook incarnation, one
 * message), so a delivery's bookkeeping happens once however often its job or Task runs
 * (issue 12 item 12). A delivery's end is recorded in the same transaction as the counters it
 * moves, conditionally, so:
 *
 * - a job SQS hands out again, or a Task the retry workflow runs again after a failure, reads the
 *   record and carries on from it instead of POSTing again a delivery that already ended;
 * - the counters move once per delivery, whichever run records it first;
 * - `ended` says the hook (on_success, on_failure, send_to_dlq) has run, so a run repeated after
 *   a failed hook runs it again, and one repeated after that does not.
 *
 * The write that ends a delivery (`ended`) also releases its stored message, if it has one, and
 * the message is deleted when its last delivery ended (./webhook-messages.ts).
 *
 * What is not covered: a POST whose answer arrived but whose record could not be written at all
 * (storage down) is sent again by the redelivery; delivery stays at least once.
 */
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { STORED_MESSAGE_TTL_SECONDS } from '../domain/delivery';
import { ddb, isConditionFailed, tableName } from './client';
import { metaKeys, ttlSeconds } from './keys';
import { statusUpdates } from './webhooks';
import { deleteIfUnreferenced, releaseMessageUpdate } from './webhook-messages';

/** Which delivery: the webhook incarnation and the message. */
export interface DeliveryKey {
  namespace: string;
  webhookId: string;
  messageId: string;
  /** The message is stored apart (a job by reference): the delivery's end releases it. */
  stored?: boolean;
  /** A replay (extension) of the delivery: a delivery of its own, with its own record. */
  replayId?: string;
}

export type FinalOutcome = 'success' | 'failed' | 'dropped';

export interface DeliveryRecord {
  /** `retrying`: the retry workflow owns the delivery; the others: it ended. */
  outcome: 'retrying' | FinalOutcome;
  attempts: number;
  /** The receiver's answer of the successful attempt (for `{{.response}}`), at most 4 KiB. */
  response?: string;
  error?: string;
  /** The hook that applies has run (or none applies): nothing is left to do. */
  ended?: boolean;
}

/** What a run expects the record to be before it writes: absent, or owned by the workflow. */
export type RecordFrom = 'none' | 'retrying';

const key = (k: DeliveryKey) => metaKeys.webhookDelivery(k.namespace, k.webhookId, k.replayId ? `${k.messageId}#REPLAY#${k.replayId}` : k.messageId);

/** The release of the delivery's stored message, when it has one and this write ends it. */
const release = (k: DeliveryKey, ends: boolean, now: number) => (k.stored && ends ? [{ Update: releaseMessageUpdate(k.namespace, k.messageId, now) }] : []);

/** After a write that released the stored message: delete it if that was its last delivery. */
async function afterRelease(k: DeliveryKey, ends: boolean) {
  if (k.stored && ends) await deleteIfUnreferenced(k.namespace, k.messageId);
}

/** The record outlives every run that could still need it: any job, redelivery or retry. */
const ttl = (now: number) => ttlSeconds(now) + STORED_MESSAGE_TTL_SECONDS;

const expecting = (from: RecordFrom) =>
  from === 'none'
    ? { ConditionExpression: 'attribute_not_exists(pk)' }
    : { ConditionExpression: 'outcome = :retrying', ExpressionAttributeValues: { ':retrying': 'retrying' } };

/**
 * Whether a transaction was cancelled only because another one held one of its items: AWS cancels
 * overlapping transactions on one item with reason `TransactionConflict` (DynamoDB Local never
 * does), and nothing was written, so the same transaction may simply be sent again
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling).
 */
export function isTransactionConflict(e: unknown): boolean {
  if ((e as { name?: string })?.name !== 'TransactionCanceledException') return false;
  const codes = ((e as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? []).map((r) => r.Code ?? 'None');
  return codes.includes('TransactionConflict') && !codes.includes('ConditionalCheckFailed');
}

/** Conflicts are retried this often, with jittered backoff from a few ms (about 2 s in all). */
const CONFLICT_TRIES = 10;

async function transact(items: NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    try {
      await ddb().send(new TransactWriteCommand({ TransactItems: items }));
      return true;
    } catch (e) {
      if (isConditionFailed(e)) return false;
      // A conflict wrote nothing: ten jobs of one webhook in one batch end together, and the
      // status item they share is in each of their transactions. Thrown on, the job would be
      // received again and its receiver POSTed again.
      if (!isTransactionConflict(e) || attempt >= CONFLICT_TRIES) throw e;
      await new Promise((r) => setTimeout(r, Math.random() * Math.min(500, 10 * 2 ** attempt)));
    }
  }
}

/** The record, read strongly consistently (it may have been written a moment ago). */
export async function readDelivery(k: DeliveryKey): Promise<DeliveryRecord | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: key(k), ConsistentRead: true }));
  return out.Item as DeliveryRecord | undefined;
}

/**
 * Hands the delivery to the retry workflow: the record says `retrying` and the counters show one
 * more pending retry. False (and nothing written) when the delivery already has a record.
 */
export function recordRetrying(k: DeliveryKey, a: { nextRetry: number; error: string; now: number }): Promise<boolean> {
  return transact([
    { Put: { TableName: tableName('meta'), Item: { ...key(k), outcome: 'retrying', attempts: 1, error: a.error, ttl: ttl(a.now) }, ...expecting('none') } },
    { Update: statusUpdates.retryScheduled(k.namespace, k.webhookId, { ...a, first: true }) },
  ]);
}

/**
 * Records how the delivery ended and counts it, if the record is still what `from` says. False
 * (nothing written) when it is not: the caller reads the record again and decides.
 */
export async function recordFinal(
  k: DeliveryKey,
  o: { ok: boolean; error?: string; response?: string; attempts: number; ended: boolean; now: number },
  from: RecordFrom,
): Promise<boolean> {
  const item: DeliveryRecord & Record<string, unknown> = {
    ...key(k),
    outcome: o.ok ? 'success' : 'failed',
    attempts: o.attempts,
    ...(o.ok ? { response: o.response ?? '' } : { error: o.error ?? 'failed' }),
    ...(o.ended ? { ended: true } : {}),
    ttl: ttl(o.now),
  };
  const done = await transact([
    { Put: { TableName: tableName('meta'), Item: item, ...expecting(from) } },
    { Update: statusUpdates.outcome(k.namespace, k.webhookId, { ok: o.ok, error: o.error, wasPending: from === 'retrying', now: o.now }) },
    ...release(k, o.ended, o.now),
  ]);
  if (done) await afterRelease(k, o.ended);
  return done;
}

/**
 * Records a delivery abandoned because its webhook was deleted or disabled; a delivery the
 * workflow held gives its pending retry back (when the webhook's counters still exist).
 */
export async function recordDropped(k: DeliveryKey, o: { releasePending: boolean; now: number }, from: RecordFrom): Promise<boolean> {
  const done = await transact([
    { Put: { TableName: tableName('meta'), Item: { ...key(k), outcome: 'dropped', attempts: 0, ended: true, ttl: ttl(o.now) }, ...expecting(from) } },
    ...(o.releasePending && from === 'retrying' ? [{ Update: statusUpdates.releasePending(k.namespace, k.webhookId) }] : []),
    ...release(k, true, o.now),
  ]);
  if (done) await afterRelease(k, true);
  return done;
}

/**
 * Marks the hook of an ended delivery as run (and releases its stored message); false when
 * another run marked it first.
 */
export async function markEnded(k: DeliveryKey, now = Date.now()): Promise<boolean> {
  const done = await transact([
    {
      Update: {
        TableName: tableName('meta'),
        Key: key(k),
        UpdateExpression: 'SET ended = :true',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(ended)',
        ExpressionAttributeValues: { ':true': true },
      },
    },
    ...release(k, true, now),
  ]);
  if (done) await afterRelease(k, true);
  return done;
}
