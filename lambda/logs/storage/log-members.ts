/**
 * Read-only queries of a log's members: the consumer groups of a stream and the subscriber cursors
 * of a subscription. Both live under the log incarnation's own partition key (keys.ts `logPk`),
 * written by lambda/streams/storage/streams.ts and lambda/subscriptions/storage/subscriptions.ts; this file only reads them. Counts of the recently
 * seen (`countMembers`, for the API's `consumer_count` and `subscriber_count`) read a bounded
 * number; listings for the console (docs/console.md) read one Query page of at most `limit` items
 * (O(limit), never the whole log).
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../../core/storage/client';
import { metaKeys } from '../../core/storage/keys';

/** The member prefixes of lambda/streams/storage/streams.ts (`GROUP#`) and lambda/subscriptions/storage/subscriptions.ts (`CURSOR#`). */
const GROUP_PREFIX = 'GROUP#';
const CURSOR_PREFIX = 'CURSOR#';

export interface GroupPositions {
  group: string;
  /** The group-wide committed position (a commit without `partition`). */
  committed?: number;
  /** Positions committed for one partition (`committed_p{n}`). */
  partitions: Record<number, number>;
  committed_at?: number;
}

export interface SubscriberCursor {
  subscriber: string;
  cursor: number;
  last_seen: number;
}

async function queryMembers(ns: string, logId: string, prefix: string, limit: number) {
  const out = await ddb().send(
    new QueryCommand({
      TableName: tableName('meta'),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': metaKeys.logPk(ns, logId), ':p': prefix },
      // A member read just after a commit or consume shows it.
      ConsistentRead: true,
      Limit: limit,
    }),
  );
  return { items: (out.Items ?? []) as Record<string, unknown>[], more: Boolean(out.LastEvaluatedKey) };
}

/** Up to `limit` consumer groups of a stream incarnation, by name; `more` when others exist. */
export async function listGroupPositions(ns: string, streamId: string, limit: number): Promise<{ groups: GroupPositions[]; more: boolean }> {
  const { items, more } = await queryMembers(ns, streamId, GROUP_PREFIX, limit);
  const groups = items.map((it) => {
    const partitions: Record<number, number> = {};
    for (const [k, v] of Object.entries(it)) {
      const m = /^committed_p(\d+)$/.exec(k);
      if (m && typeof v === 'number') partitions[Number(m[1])] = v;
    }
    return {
      group: String(it.sk).slice(GROUP_PREFIX.length),
      ...(typeof it.committed_offset === 'number' ? { committed: it.committed_offset } : {}),
      partitions,
      ...(typeof it.committed_at === 'number' ? { committed_at: it.committed_at } : {}),
    };
  });
  return { groups, more };
}

/** Up to `limit` subscriber cursors of a subscription incarnation, by id; `more` when others exist. */
export async function listSubscriberCursors(ns: string, subId: string, limit: number): Promise<{ subscribers: SubscriberCursor[]; more: boolean }> {
  const { items, more } = await queryMembers(ns, subId, CURSOR_PREFIX, limit);
  return {
    subscribers: items.map((it) => ({ subscriber: String(it.sk).slice(CURSOR_PREFIX.length), cursor: Number(it.cursor ?? 0), last_seen: Number(it.last_seen ?? 0) })),
    more,
  };
}

/** Member records (groups, subscriber cursors) one count reads at most. */
export const MAX_COUNTED = 1000;

/** A member count: exact, or (`atLeast`) a lower bound when the log has more records than one count reads. */
export interface MemberCount {
  count: number;
  atLeast: boolean;
}

/**
 * Records of a log with `prefix` whose `seen`/`last_seen` is at or after `since`, among the first
 * {@link MAX_COUNTED} (whatever names clients chose, a count stays a few small Queries). A Query
 * stops at 1 MB of items read before it reaches its `Limit` (a group of a 64-partition stream that
 * commits per partition is ~1.5 KB, so ~650 per page), so the count goes on from the page's
 * `LastEvaluatedKey` until the records are all read or {@link MAX_COUNTED} were:
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.Pagination.html
 * Records left unread make it a lower bound (`atLeast`), which the API answer says.
 */
export async function countMembers(ns: string, logId: string, prefix: string, seenAttr: 'seen' | 'last_seen', since: number): Promise<MemberCount> {
  let count = 0;
  let read = 0;
  let from: Record<string, unknown> | undefined;
  do {
    const out = await ddb().send(
      new QueryCommand({
        TableName: tableName('meta'),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        FilterExpression: '#seen >= :since',
        ExpressionAttributeNames: { '#seen': seenAttr },
        ExpressionAttributeValues: { ':pk': metaKeys.logPk(ns, logId), ':p': prefix, ':since': since },
        Select: 'COUNT',
        // Strongly consistent: the count is exact (docs/streams-and-subscriptions.md), so a group
        // that committed a moment ago counts; twice the read units of the records read.
        ConsistentRead: true,
        Limit: MAX_COUNTED - read,
        ...(from ? { ExclusiveStartKey: from } : {}),
      }),
    );
    count += out.Count ?? 0;
    read += out.ScannedCount ?? 0;
    from = out.LastEvaluatedKey;
  } while (from && read < MAX_COUNTED);
  return { count, atLeast: from !== undefined };
}
