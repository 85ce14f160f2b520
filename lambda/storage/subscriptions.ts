/**
 * Subscription records in the metadata table: the resource item (settings only; it never changes
 * after create) and, under the incarnation's own partition key (keys.ts `logPk`), its head
 * (./log-heads.ts) and one cursor record per subscriber id. Log chunks live in
 * ./subscription-log.ts.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { countAll, ddb, isConditionFailed, tableName } from './client';
import { metaKeys, ttlSeconds } from './keys';
import type { ResourceItem } from './resources';

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

/** A subscriber's cursor, strongly consistent; undefined for a subscriber never seen. */
export async function getCursor(ns: string, subId: string, subscriber: string): Promise<CursorItem | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: cursorKey(ns, subId, subscriber), ConsistentRead: true }));
  return out.Item as CursorItem | undefined;
}

/**
 * Moves a subscriber's cursor from `seen` (undefined: the record must not exist yet) to `next`.
 * Returns false when another consume moved it first: the caller re-reads and tries again, so two
 * consumes with the same subscriber id never both return a message.
 */
export async function moveCursor(ns: string, subId: string, subscriber: string, seen: number | undefined, next: number, now: number, ttlMs: number): Promise<boolean> {
  try {
    await ddb().send(
      new UpdateCommand({
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
      }),
    );
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
}

/** Subscriber ids seen since `since` (`subscriber_count`). */
export async function countSubscribers(ns: string, subId: string, since: number): Promise<number> {
  return countAll({
    TableName: tableName('meta'),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
    FilterExpression: 'last_seen >= :since',
    ExpressionAttributeValues: { ':pk': metaKeys.logPk(ns, subId), ':p': PREFIX, ':since': since },
  });
}
