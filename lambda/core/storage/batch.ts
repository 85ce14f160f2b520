/**
 * BatchWriteItem and BatchGetItem with retries of unprocessed items (throttling hands some back),
 * beside ./client.ts `batchWrite`: `putEach` is for the publish path, which must know which items
 * are stored so a failed publish records exactly what it lost (lambda/logs/storage/log-reservations.ts).
 */
import { BatchGetCommand, BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { ddb } from './client';

/** BatchWriteItem takes at most 25 requests per call. */
const BATCH_WRITE_MAX = 25;
const MAX_ATTEMPTS = 8;

const backoff = (attempt: number) => new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** attempt)));

/** Sends one group of at most 25 requests until all are processed; throws when it cannot. */
async function sendGroup(table: string, group: Record<string, unknown>[]): Promise<void> {
  let pending = group;
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt >= MAX_ATTEMPTS) throw new Error(`BatchWriteItem on ${table} left ${pending.length} items unprocessed after ${MAX_ATTEMPTS} attempts`);
    if (attempt > 0) await backoff(attempt);
    const out = await ddb().send(new BatchWriteCommand({ RequestItems: { [table]: pending } }));
    pending = (out.UnprocessedItems?.[table] ?? []) as Record<string, unknown>[];
  }
}

const groupsOf = <T>(list: T[]) => Array.from({ length: Math.ceil(list.length / BATCH_WRITE_MAX) }, (_, i) => list.slice(i * BATCH_WRITE_MAX, (i + 1) * BATCH_WRITE_MAX));

/**
 * Puts every item and reports which could not be confirmed stored (by index), with the first
 * error; never throws. A group whose call failed counts as not stored, though a call that timed
 * out may in fact have stored it: the caller then under-counts, which is the safe direction.
 */
export async function putEach(table: string, items: Record<string, unknown>[]): Promise<{ failed: number[]; error?: unknown }> {
  const groups = groupsOf(items.map((Item, index) => ({ Item, index })));
  const failed: number[] = [];
  let error: unknown;
  await Promise.all(
    groups.map(async (g) => {
      try {
        await sendGroup(table, g.map(({ Item }) => ({ PutRequest: { Item } })));
      } catch (e) {
        error ??= e;
        failed.push(...g.map((x) => x.index));
      }
    }),
  );
  return { failed: failed.sort((a, b) => a - b), error };
}

/** Reads items by key, 100 keys a call (BatchGetItem's limit); missing items are left out. */
export async function batchGet<T>(table: string, keys: Record<string, unknown>[], consistent: boolean): Promise<T[]> {
  const found: T[] = [];
  for (let i = 0; i < keys.length; i += 100) {
    let pending = keys.slice(i, i + 100);
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt >= MAX_ATTEMPTS) throw new Error(`BatchGetItem on ${table} left ${pending.length} keys unread after ${MAX_ATTEMPTS} attempts`);
      if (attempt > 0) await backoff(attempt);
      const out = await ddb().send(new BatchGetCommand({ RequestItems: { [table]: { Keys: pending, ConsistentRead: consistent } } }));
      found.push(...((out.Responses?.[table] ?? []) as T[]));
      pending = (out.UnprocessedKeys?.[table]?.Keys ?? []) as Record<string, unknown>[];
    }
  }
  return found;
}
