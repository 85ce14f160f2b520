/**
 * The writes of held messages' amounts to a queue's counters (./queues.ts "Held messages") that
 * must apply once: the quiet-queue reconciliation (lambda/queues/sweep.ts) takes the held
 * amount as it is and adds it to SQS's own count, so a held amount one too high or too low stays
 * in `message_count` until the messages' TTL ends, however often the queue is reconciled.
 *
 * A plain UpdateItem's ADD is applied twice when DynamoDB applied it and its answer was lost: the
 * SDK sends the same request again. So each is a one-item TransactWriteItems with a
 * ClientRequestToken, as ./client.ts `updateOnce` (which a cancel already used): "subsequent
 * TransactWriteItems calls with the same client token return successfully without making any
 * changes" for 10 minutes
 * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html#DDB-TransactWriteItems-request-ClientRequestToken),
 * and this module's own tries (up to {@link TRIES} calls) send the same request with the same
 * token, so a call whose every attempt failed after DynamoDB applied it is not applied again by
 * the next try. A try cancelled on a conflict with another transaction applied nothing and goes
 * again with a new token, unless an earlier try (or an earlier attempt of the SDK) may have been
 * applied: then with the same one. (A token kept on the counters item was tried first: with 8 slots, a
 * dozen held publishes at once overwrote a token before its retry, and the simulation found the
 * held amount one too high.) Two write units instead of one, for held messages only.
 *
 * The expiry buckets are written after, as for any message (only their ended ones are read, once
 * the messages' TTL is over), except at a handover, where their held part ends in the same
 * transaction as the totals' (a bucket left saying "held" would take the message out of the held
 * amount a second time once its TTL ended).
 */
import { GetCommand, TransactWriteCommand, UpdateCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, isTransactionConflict, onceToken, tableName, transactWrite } from '../../core/storage/client';
import { metaKeys, ttlSeconds } from '../../core/storage/keys';
import { withRetries } from '../../core/rules/dependency-errors';
import { bucketUpdate, type BucketAmounts } from './queue-buckets';

const META = () => tableName('meta');

/** Calls of one write beyond the SDK's own attempts (./client.ts), 100 then 300 ms apart. */
const TRIES = 3;

export interface HeldAmounts {
  count: number;
  bytes: number;
  heldCount: number;
  heldBytes: number;
}

/**
 * An update of another item made in the same transaction as the counters (a held part's marker
 * taken out of its state item at handover: ./held-packs.ts `openMarkUpdates`). Built by the
 * caller, so this module names no other table.
 */
export type LinkedUpdate = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** Thrown by {@link addHeldOnce} when some marks were taken out already (nothing written): their indexes. */
export class MarksGoneError extends Error {
  constructor(readonly gone: number[]) {
    super('held parts ended already');
  }
}

/**
 * Adds `a` (negative amounts take out) to the counters, once; `room`: only if the bytes stay
 * within it. 'ok', 'full' (the room condition refused it) or 'gone' (no counters: the queue was
 * deleted). Throws when every try failed (applied or not: unknown). `linked` (an end at handover):
 * conditional updates of the messages' state items in the same transaction, so a held part is
 * ended by one handover only, however many take the message over; {@link MarksGoneError} names
 * (by index in `linked`) those whose condition failed.
 */
export async function addHeldOnce(ns: string, queueId: string, a: HeldAmounts, now: number, room?: number, buckets?: BucketAmounts, linked: LinkedUpdate[] = []): Promise<'ok' | 'full' | 'gone'> {
  const update = {
    TableName: META(),
    Key: metaKeys.queueCounters(ns, queueId),
    UpdateExpression: 'ADD message_count :n, #b :b, held_count :hn, held_bytes :hb SET changed_at = :now',
    ConditionExpression: `attribute_exists(pk)${room === undefined ? '' : ' AND #b <= :room'}`,
    ExpressionAttributeNames: { '#b': 'bytes' },
    ExpressionAttributeValues: { ':n': a.count, ':b': a.bytes, ':hn': a.heldCount, ':hb': a.heldBytes, ':now': now, ...(room === undefined ? {} : { ':room': room - a.bytes }) },
  };
  // The expiry buckets' part in the same transaction, when given: both apply, or neither.
  const bucketItems = [...(buckets ?? [])].map(([end, b]) => ({ Update: bucketUpdate(ns, queueId, end, b) }));
  // One token for every call of this write: transactWrite changes it only while no try may have
  // been applied (a conflict cancels the whole transaction: nothing written), so each call below
  // carries the token of any try that may have applied it.
  const once = onceToken();
  for (let attempt = 1; ; attempt++) {
    try {
      // Held publishes at once all write this one item: a try cancelled on a conflict goes again
      // after a random wait (fixed waits kept them meeting).
      await transactWrite({ TransactItems: [{ Update: update }, ...bucketItems, ...linked] }, { once });
      return 'ok';
    } catch (e) {
      const reasons = (e as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
      const first = 1 + bucketItems.length;
      const gone = linked.map((_, k) => k).filter((k) => reasons[first + k]?.Code === 'ConditionalCheckFailed');
      if (gone.length) throw new MarksGoneError(gone);
      if (isConditionFailed(e)) {
        const out = await ddb().send(new GetCommand({ TableName: META(), Key: metaKeys.queueCounters(ns, queueId), ConsistentRead: true, ProjectionExpression: 'pk' }));
        return out.Item ? 'full' : 'gone';
      }
      if (attempt >= TRIES) throw e;
      await new Promise((r) => setTimeout(r, 100 * 3 ** (attempt - 1)));
    }
  }
}

/**
 * Ends one handed-over message's held part in a queue, left by a handover that stored it in SQS
 * but could not end it (`held_left` on its state item names the queue): the counters, its expiry
 * bucket (`bucketEnd`) and the state item's `held_left` in one transaction, conditional on the
 * item still naming the queue, so however often the tick retries it the held part ends once. A
 * rare path (2 write units per item): it may meet the counters item's plain writes, so a
 * transaction cancelled on a conflict is sent again; one applied whose answer was lost meets its
 * own condition when sent again (ended already). A deleted queue's part is dropped from the item.
 */
export async function endHeldPartOnce(ns: string, queueId: string, bytes: number, bucketEnd: number, item: { pk: string; sk: string; leftId?: string }, now: number): Promise<void> {
  const scheduler = tableName('scheduler');
  // `leftId`: how the item names the queue in `held_left` (a pack names it with the message's slot).
  const left = item.leftId ?? queueId;
  const leftOf = { TableName: scheduler, Key: { pk: item.pk, sk: item.sk }, UpdateExpression: 'DELETE held_left :q', ExpressionAttributeValues: { ':q': new Set([left]) } };
  const write = () =>
    ddb().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: META(),
              Key: metaKeys.queueCounters(ns, queueId),
              UpdateExpression: 'ADD held_count :hn, held_bytes :hb SET changed_at = :now',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeValues: { ':hn': -1, ':hb': -bytes, ':now': now },
            },
          },
          {
            Update: {
              TableName: META(),
              Key: metaKeys.queueExpiryBucket(ns, queueId, bucketEnd),
              UpdateExpression: 'ADD hn :hn, hb :hb SET #t = :ttl',
              ExpressionAttributeNames: { '#t': 'ttl' },
              ExpressionAttributeValues: { ':hn': -1, ':hb': -bytes, ':ttl': ttlSeconds(bucketEnd + 86_400_000) },
            },
          },
          { Update: { ...leftOf, ConditionExpression: 'contains(held_left, :id)', ExpressionAttributeValues: { ...leftOf.ExpressionAttributeValues, ':id': left } } },
        ],
      }),
    );
  try {
    await withRetries(write, { tries: 4, firstDelayMs: 50, retryIf: isTransactionConflict });
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    const reasons = (e as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
    // The item no longer names the queue: ended already. Otherwise the queue is gone, and the part with it.
    if (reasons[2]?.Code !== 'ConditionalCheckFailed') await ddb().send(new UpdateCommand(leftOf));
  }
}
