/**
 * How many webhook deliveries each namespace has in flight (keys.ts `webhookInFlight`), so that
 * one namespace's backlog takes at most its share of the delivery function's capacity
 * (lambda/webhooks/share.ts). A batch with jobs of slow webhooks admits them with one conditional
 * ADD and gives them back with one ADD when it is done: writes per namespace and batch, not per
 * job. A batch of fast jobs only reads the count when it starts ({@link roomFor}), and counts
 * itself ({@link holdDeliveries}) only if it is still running a moment later; most end before
 * that and write nothing here. The count is kept per minute: a batch gives back to the minute it
 * took from, and a count a crashed invocation never gave back stops mattering when its minute
 * ends.
 *
 * One item per namespace and minute holds both lanes (lambda/domain/delivery-lanes.ts): the fast
 * lane in `in_flight` and `batches`, the slow lane in `slow_in_flight` and `slow_batches`.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Lane } from '../domain/delivery-lanes';
import { ddb, isConditionFailed, tableName } from './client';
import { metaKeys } from './keys';

/** The minute a batch counts in (Unix seconds of its start). */
export const shareMinute = (nowMs: number) => Math.floor(nowMs / 60_000) * 60;

const key = (ns: string, minute: number) => metaKeys.webhookInFlight(ns, minute);
const ATTRS: Record<Lane, { n: string; b: string }> = {
  fast: { n: 'in_flight', b: 'batches' },
  slow: { n: 'slow_in_flight', b: 'slow_batches' },
};

/**
 * Adds `n` deliveries, and one batch if `batch`, to `lane`; with `within`, only if its counts
 * stay within `share` deliveries and (when a batch is added) `batches` batches.
 */
function addCommand(ns: string, minute: number, lane: Lane, n: number, batch: boolean, within?: { share: number; batches: number | null }) {
  const a = ATTRS[lane];
  const names: Record<string, string> = { '#n': a.n, '#ttl': 'ttl', ...(batch ? { '#b': a.b } : {}) };
  const values: Record<string, number> = { ':n': n, ':ttl': minute + 600, ...(batch ? { ':one': 1 } : {}) };
  let condition: string | undefined;
  if (within) {
    values[':room'] = within.share - n;
    condition = 'attribute_not_exists(#n) OR #n <= :room';
    if (batch) {
      values[':batches'] = within.batches ?? 0;
      condition = `(${condition}) AND (attribute_not_exists(#b) OR #b < :batches)`;
    }
  }
  return new UpdateCommand({
    TableName: tableName('meta'),
    Key: key(ns, minute),
    UpdateExpression: batch ? 'ADD #n :n, #b :one SET #ttl = :ttl' : 'ADD #n :n SET #ttl = :ttl',
    ...(condition ? { ConditionExpression: condition } : {}),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  });
}

/**
 * Adds `n` deliveries, and one batch unless `batches` is null, to `lane` if its counts stay
 * within `share` deliveries and `batches` batches; false (nothing changed) otherwise.
 */
async function tryAdd(ns: string, minute: number, n: number, share: number, batches: number | null, lane: Lane): Promise<boolean> {
  try {
    await ddb().send(addCommand(ns, minute, lane, n, batches !== null, { share, batches }));
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
}

/**
 * Admits up to `wanted` deliveries of namespace `ns` in `minute` and `lane`, within `share` in
 * flight and `batches` batches holding any of them; returns how many it admitted (0 to
 * `wanted`), counted (with this batch) until {@link releaseDeliveries}. `batches` null: the
 * jobs ride in a batch the namespace's other lane already counts, and take no batch here.
 */
export async function admitDeliveries(ns: string, minute: number, wanted: number, share: number, batches: number | null = Number.MAX_SAFE_INTEGER, lane: Lane = 'fast'): Promise<number> {
  if (wanted <= 0) return 0;
  if (wanted <= share && (await tryAdd(ns, minute, wanted, share, batches, lane))) return wanted;
  // Not all fit: take what is left, read once (a concurrent batch may take it first: then none).
  const room = await roomFor(ns, minute, wanted, share, batches, lane);
  return room > 0 && (await tryAdd(ns, minute, room, share, batches, lane)) ? room : 0;
}

/**
 * How many of `wanted` deliveries of `ns` in `minute` and `lane` fit within `share` in flight and
 * `batches` batches (null: they ride in a batch counted in the other lane), by one strongly
 * consistent read and no write (1 read unit). What it admits is not counted until
 * {@link holdDeliveries}.
 */
export async function roomFor(ns: string, minute: number, wanted: number, share: number, batches: number | null, lane: Lane): Promise<number> {
  if (wanted <= 0) return 0;
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: key(ns, minute), ConsistentRead: true }));
  const a = ATTRS[lane];
  if (batches !== null && Number(out.Item?.[a.b] ?? 0) >= batches) return 0;
  return Math.max(0, Math.min(wanted, share - Number(out.Item?.[a.n] ?? 0)));
}

/**
 * Counts `taken` deliveries of `ns` in `minute` that are already running (admitted by
 * {@link roomFor}), unconditionally: one ADD. Give them back with {@link releaseDeliveries}.
 */
export async function holdDeliveries(ns: string, minute: number, lane: Lane, taken: { jobs: number; batch: boolean }): Promise<void> {
  await ddb().send(addCommand(ns, minute, lane, taken.jobs, taken.batch));
}

/** What one batch took in one namespace's share, per lane: its jobs and whether it took a batch. */
export type Taken = Partial<Record<Lane, { jobs: number; batch: boolean }>>;

/** Gives back what a batch took in `minute` (one write for both lanes). */
export async function releaseDeliveries(ns: string, minute: number, taken: Taken): Promise<void> {
  const adds: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, number> = {};
  for (const lane of ['fast', 'slow'] as const) {
    const t = taken[lane];
    if (!t || t.jobs <= 0) continue;
    const a = ATTRS[lane];
    adds.push(`#${lane}n :${lane}n`);
    names[`#${lane}n`] = a.n;
    values[`:${lane}n`] = -t.jobs;
    if (t.batch) {
      adds.push(`#${lane}b :${lane}b`);
      names[`#${lane}b`] = a.b;
      values[`:${lane}b`] = -1;
    }
  }
  if (!adds.length) return;
  await ddb().send(
    new UpdateCommand({
      TableName: tableName('meta'),
      Key: key(ns, minute),
      UpdateExpression: `ADD ${adds.join(', ')}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    }),
  );
}
