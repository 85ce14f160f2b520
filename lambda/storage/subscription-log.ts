/**
 * Subscription log items (table `subscriptionLog`): one item per message per subscription, read by
 * every subscriber from its own cursor. The publish sink, the sequence-range read of consume
 * (O(batch)), and the deletes of trimming and purging.
 */
import { QueryCommand, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import { batchWrite, ddb, tableName } from './client';
import { ttlSeconds } from './keys';
import type { Binding } from './resources';
import { clearPending, reserveBlock } from './log-reservations';
import type { SubscriptionBindingSettings } from './subscriptions';
import type { PublishedMessage } from '../domain/message';
import { announceArrival } from '../publishing/arrivals';

export interface SubscriptionLogItem extends PublishedMessage {
  subscription_id: string;
  seq: number;
  ttl: number;
}

const LOG = () => tableName('subscriptionLog');

/**
 * The subscription sink of publish: appends the messages once per bound subscription (all its
 * subscribers read the same items). Same reservation scheme as streams (./log-reservations.ts).
 */
export async function appendToSubscriptions(ctx: { namespace: string; now: number }, bindings: Binding[], messages: PublishedMessage[]): Promise<void> {
  const bytes = messages.reduce((n, m) => n + m.size, 0);
  await Promise.all(
    bindings.map(async (b) => {
      const s = b.settings as unknown as SubscriptionBindingSettings;
      const target = { namespace: ctx.namespace, kind: 'SUBSCRIPTION' as const, name: b.name, id: b.id };
      const r = await reserveBlock(target, messages.length, bytes, ctx.now);
      if (!r) return;
      try {
        const items: SubscriptionLogItem[] = messages.map((m, i) => ({
          ...m,
          subscription_id: b.id,
          seq: r.start + i,
          // Backstop to the sweeper, which removes expired messages and keeps the counters right.
          ttl: ttlSeconds(m.published_at + s.message_ttl_seconds * 1000) + 3600,
        }));
        await batchWrite(LOG(), items.map((Item) => ({ PutRequest: { Item } })));
      } finally {
        await clearPending(target, [r.token]);
      }
      announceArrival(b.id);
    }),
  );
}

/** Messages with `from <= seq < to`, in order, up to `max`; `keysOnly` for trimming. */
export async function readSubscriptionLog(subId: string, from: number, to: number, max: number, keysOnly = false): Promise<SubscriptionLogItem[]> {
  const out: SubscriptionLogItem[] = [];
  if (to <= from) return out;
  let start: Record<string, unknown> | undefined;
  do {
    const page: QueryCommandOutput = await ddb().send(
      new QueryCommand({
        TableName: LOG(),
        KeyConditionExpression: 'subscription_id = :s AND seq BETWEEN :lo AND :hi',
        ExpressionAttributeValues: { ':s': subId, ':lo': from, ':hi': to - 1 },
        ...(keysOnly ? { ProjectionExpression: 'subscription_id, seq, published_at, #sz', ExpressionAttributeNames: { '#sz': 'size' } } : {}),
        ConsistentRead: true,
        Limit: max - out.length,
        ExclusiveStartKey: start,
      }),
    );
    out.push(...((page.Items ?? []) as SubscriptionLogItem[]));
    start = page.LastEvaluatedKey;
  } while (start && out.length < max);
  return out;
}

export async function deleteSubscriptionItems(subId: string, seqs: number[]): Promise<void> {
  await batchWrite(LOG(), seqs.map((seq) => ({ DeleteRequest: { Key: { subscription_id: subId, seq } } })));
}

/** Deletes up to `limit` items of a deleted subscription; returns how many. */
export async function purgeSubscriptionLog(subId: string, limit: number): Promise<number> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: LOG(),
      KeyConditionExpression: 'subscription_id = :s',
      ExpressionAttributeValues: { ':s': subId },
      ProjectionExpression: 'subscription_id, seq',
      Limit: limit,
    }),
  );
  const keys = (out.Items ?? []) as Record<string, unknown>[];
  if (keys.length) await batchWrite(LOG(), keys.map((Key) => ({ DeleteRequest: { Key } })));
  return keys.length;
}
