/**
 * Read-only listings of a log's members for the console (docs/console.md): the consumer groups of
 * a stream and the subscriber cursors of a subscription. Both live under the log incarnation's own
 * partition key (keys.ts `logPk`), written by ./streams.ts and ./subscriptions.ts; this file only
 * queries them, one Query page of at most `limit` items (O(limit), never the whole log).
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from './client';
import { metaKeys } from './keys';

/** The member prefixes of ./streams.ts (`GROUP#`) and ./subscriptions.ts (`CURSOR#`). */
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
