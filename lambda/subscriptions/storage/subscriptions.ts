/**
 * Subscription records in the metadata table: the resource item (settings only; it never changes
 * after create) and, under the incarnation's own partition key (keys.ts `logPk`), its head
 * (../../logs/storage/log-heads.ts) and one cursor record per subscriber id. Log chunks live in
 * ./subscription-log.ts.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName, transactWrite, type OnceToken } from '../../core/storage/client';
import { countMembers } from '../../logs/storage/log-members';
import { metaKeys, ttlSeconds } from '../../core/storage/keys';
import { cutOffAtDeadline, isRetryableDependencyFailure, withRetries } from '../../core/rules/dependency-errors';
import type { ResourceItem } from '../../core/storage/resources';

export type { SubscriptionBindingSettings } from './subscription-log';

export interface SubscriptionItem extends ResourceItem {
  kind: 'SUBSCRIPTION';
  max_size_mb: number;
  message_ttl_seconds: number;
}

export async function getSubscription(ns: string, name: string): Promise<SubscriptionItem | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.resource(ns, 'SUBSCRIPTION', name), ConsistentRead: true }));
  return out.Item as SubscriptionItem | undefined;
}

const PREFIX = 'CURSOR#';
const cursorKey = (ns: string, subId: string, subscriber: string) => metaKeys.logMember(ns, subId, `${PREFIX}${subscriber}`);

export interface CursorItem {
  /** The next sequence number this subscriber reads. */
  cursor: number;
  last_seen: number;
}

/**
 * A subscriber's cursor, strongly consistent; undefined for a subscriber never seen. `abortSignal`
 * (the consume's answer deadline) ends the SDK's retries of the read with it.
 */
export async function getCursor(ns: string, subId: string, subscriber: string, abortSignal?: AbortSignal): Promise<CursorItem | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: cursorKey(ns, subId, subscriber), ConsistentRead: true }), { abortSignal });
  return out.Item as CursorItem | undefined;
}

/**
 * A move is sent again over about 3 s beyond the SDK's retries (a short storage outage), as other
 * writes that must not be lost, and on until one try starts 5 s or more after the first: AWS
 * answers a repeat of a token whose transaction is still in progress with
 * TransactionInProgressException, and recovers that transaction inline only for a retry 5 s or
 * more after its first attempt (the exception's "Recommended Settings",
 * https://docs.aws.amazon.com/AWSJavaSDK/latest/javadoc/com/amazonaws/services/dynamodbv2/model/TransactionInProgressException.html).
 */
const MOVE_RETRIES = { tries: 6, firstDelayMs: 100, retryIf: isRetryableDependencyFailure, outlastMs: 5_000 };

/**
 * Moves a subscriber's cursor from `seen` (undefined: the record must not exist yet) to `next`.
 * Returns false when another consume moved it first: the caller re-reads and tries again, so two
 * consumes with the same subscriber id never both return a message.
 *
 * A move whose answer was lost must still count as made, or its batch would never be given to this
 * subscriber (a plain UpdateItem's retry fails its condition on the move's own effect, or on later
 * moves by other consumes, and cannot tell which). So the move is a one-item TransactWriteItems
 * whose ClientRequestToken is drawn once per move and sent with every try, the SDK's and ours:
 * within 10 minutes a repeat of an applied call "return[s] successfully without making any
 * changes", whatever moved the cursor since, and a different request with the same token would be
 * refused with IdempotentParameterMismatch (every try sends the same input, `now` included)
 * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html#DDB-TransactWriteItems-request-ClientRequestToken).
 * A try that meets its own earlier one still in progress (`TransactionInProgressException`), or a
 * transaction cancelled as throttled, is retried like a throttle ({@link MOVE_RETRIES}), though
 * nothing of the move outlasts `answerBy` (the consume's answer deadline): no wait of ours ends
 * after it, and an abort signal at it ends the SDK's own retries inside a try (its backoff
 * between attempts, up to seconds for a throttle) and an attempt in flight. So: success means
 * applied (by this try or an earlier one), a cancel on the condition means another consume moved
 * first, and only when every try failed (storage unreachable for the SDK's retries and ours) or
 * the deadline cut the move off is the outcome unknown: the error is thrown (503, the abort as
 * `cutOffAtDeadline`'s), and the batch is skipped for this subscriber if the move was
 * applied (at most once per subscriber id, as a consume answer lost on its way to the client).
 * Two write units (a transactional write of one item under 1 KB), where a plain update was one.
 */
export async function moveCursor(ns: string, subId: string, subscriber: string, seen: number | undefined, next: number, now: number, ttlMs: number, answerBy: number): Promise<boolean> {
  const move = {
    TableName: tableName('meta'),
    Key: cursorKey(ns, subId, subscriber),
    UpdateExpression: 'SET #c = :next, last_seen = :now, #ttl = :ttl',
    ConditionExpression: seen === undefined ? 'attribute_not_exists(pk)' : '#c = :seen',
    ExpressionAttributeNames: { '#c': 'cursor', '#ttl': 'ttl' },
    ExpressionAttributeValues: {
      ':next': next,
      ':now': now,
      // A subscriber idle for far longer than the TTL has nothing left to read: let it go.
      ':ttl': ttlSeconds(now + ttlMs + 7 * 86_400_000),
      ...(seen === undefined ? {} : { ':seen': seen }),
    },
  };
  // One token for every try (`maybeApplied`: transactWrite never draws a new one, even after a conflict).
  const once: OnceToken = { token: randomUUID(), maybeApplied: true };
  const abortSignal = AbortSignal.timeout(Math.max(1, answerBy - Date.now()));
  try {
    await withRetries(() => transactWrite({ TransactItems: [{ Update: move }] }, { once, abortSignal }), { ...MOVE_RETRIES, until: answerBy });
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw abortSignal.aborted ? cutOffAtDeadline('The cursor move', e) : e;
  }
}

/** Subscriber ids seen since `since` (`subscriber_count`), bounded as ../../logs/storage/log-members.ts `countMembers`. */
export const countSubscribers = (ns: string, subId: string, since: number) => countMembers(ns, subId, PREFIX, 'last_seen', since);
