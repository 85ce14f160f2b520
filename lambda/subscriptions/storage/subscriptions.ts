/**
 * Subscription records in the metadata table: the resource item (settings only; it never changes
 * after create) and, under the incarnation's own partition key (keys.ts `logPk`), its head
 * (../../logs/storage/log-heads.ts) and one cursor record per subscriber id. Log chunks live in
 * ./subscription-log.ts.
 */
import { randomBytes } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName } from '../../core/storage/client';
import { countMembers } from '../../logs/storage/log-members';
import { metaKeys, ttlSeconds } from '../../core/storage/keys';
import { isRetryableDependencyFailure, withRetries } from '../../core/rules/dependency-errors';
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
  /** Tokens of its last four moves, newest first (`moveCursor`). */
  m0?: string;
  m1?: string;
  m2?: string;
  m3?: string;
}

/** A subscriber's cursor, strongly consistent; undefined for a subscriber never seen. */
export async function getCursor(ns: string, subId: string, subscriber: string): Promise<CursorItem | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: cursorKey(ns, subId, subscriber), ConsistentRead: true }));
  return out.Item as CursorItem | undefined;
}

/** Tokens of the last moves a cursor record keeps (`m0` newest). */
const MOVE_SLOTS = ['m0', 'm1', 'm2', 'm3'] as const;

/**
 * Whether the move with `token` was applied: the record keeps the tokens of its last four moves.
 * Read again (over about 3 s, a short storage outage) when the read fails; undefined when it never
 * answered: the consume then fails, and the batch is skipped for this subscriber if the move was
 * applied (at most once per subscriber id, as a consume answer lost on its way to the client).
 */
async function moveApplied(ns: string, subId: string, subscriber: string, token: string): Promise<boolean | undefined> {
  try {
    const cur = await withRetries(() => getCursor(ns, subId, subscriber), { tries: 6, firstDelayMs: 100, retryIf: isRetryableDependencyFailure });
    return MOVE_SLOTS.some((slot) => cur?.[slot] === token);
  } catch {
    return undefined;
  }
}

/**
 * Moves a subscriber's cursor from `seen` (undefined: the record must not exist yet) to `next`.
 * Returns false when another consume moved it first: the caller re-reads and tries again, so two
 * consumes with the same subscriber id never both return a message.
 *
 * A move whose answer was lost must still count as made, or its batch would never be given to this
 * subscriber: the SDK's retry of an applied move fails its condition on the move's own effect (or
 * on a later consume's move), and a move can fail after the SDK's retries although it was applied.
 * So each move records its token in a short history (`m0`..`m3`, shifted by the same update: every
 * operand is read before it), and both outcomes read the record back: the move was made when its
 * token is there.
 */
export async function moveCursor(ns: string, subId: string, subscriber: string, seen: number | undefined, next: number, now: number, ttlMs: number): Promise<boolean> {
  const token = randomBytes(8).toString('hex');
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: cursorKey(ns, subId, subscriber),
        UpdateExpression: `SET #c = :next, last_seen = :now, #ttl = :ttl, m0 = :tok, ${MOVE_SLOTS.slice(1).map((slot, i) => `${slot} = if_not_exists(${MOVE_SLOTS[i]}, :none)`).join(', ')}`,
        ConditionExpression: seen === undefined ? 'attribute_not_exists(pk)' : '#c = :seen',
        ExpressionAttributeNames: { '#c': 'cursor', '#ttl': 'ttl' },
        ExpressionAttributeValues: {
          ':next': next,
          ':tok': token,
          ':none': '-',
          ':now': now,
          // A subscriber idle for far longer than the TTL has nothing left to read: let it go.
          ':ttl': ttlSeconds(now + ttlMs + 7 * 86_400_000),
          ...(seen === undefined ? {} : { ':seen': seen }),
        },
      }),
    );
    return true;
  } catch (e) {
    const applied = await moveApplied(ns, subId, subscriber, token);
    if (applied) return true;
    if (isConditionFailed(e) && applied === false) return false;
    throw e;
  }
}

/** Subscriber ids seen since `since` (`subscriber_count`), bounded as ../../logs/storage/log-members.ts `countMembers`. */
export const countSubscribers = (ns: string, subId: string, since: number) => countMembers(ns, subId, PREFIX, 'last_seen', since);
