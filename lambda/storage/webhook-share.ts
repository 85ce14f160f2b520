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
 *
 * Exact under lost answers: each batch's count in a lane is also an entry of its own on the item
 * (`f_{batch id}` / `s_{batch id}`, its jobs and batch flag, {@link entryValue}), added in the
 * same write as the count. An admission or hold is conditional on its entry being absent, and a
 * give-back on it being there with the value it gives back, removing it: a write re-sent after a
 * lost answer (by the SDK or a retry) is refused instead of counted twice, and a give-back of a
 * write that never applied gives nothing back. A refusal carries the item
 * (`ReturnValuesOnConditionCheckFailure: ALL_OLD`, at no read cost:
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html), so the
 * caller learns what is there without a read. The entries add about 17 bytes a batch in flight to
 * an item far below 1 KB: every write stays 1 write unit.
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

/** The attribute of batch `id`'s entry in `lane`. */
const entryName = (lane: Lane, id: string) => `${lane[0]}_${id}`;

/** An entry's value: its jobs and whether it took a batch, in one number. */
const entryValue = (t: { jobs: number; batch: boolean }) => t.jobs * 2 + (t.batch ? 1 : 0);
const fromEntry = (v: number) => ({ jobs: Math.floor(v / 2), batch: v % 2 === 1 });

/** An item a refusal carried, in DynamoDB's attribute-value form (the document client does not unmarshall errors). */
const refusedItem = (e: unknown) => (e as { Item?: Record<string, { N?: string }> }).Item ?? {};

/**
 * Adds `n` deliveries, and one batch if `batch`, to `lane`, with batch `id`'s entry, if the entry
 * is not there yet; with `within`, only if its counts stay within `share` deliveries and (when a
 * batch is added) `batches` batches.
 */
function addCommand(ns: string, minute: number, lane: Lane, id: string, n: number, batch: boolean, within?: { share: number; batches: number | null }) {
  const a = ATTRS[lane];
  const names: Record<string, string> = { '#n': a.n, '#ttl': 'ttl', '#e': entryName(lane, id), ...(batch ? { '#b': a.b } : {}) };
  const values: Record<string, number> = { ':n': n, ':ttl': minute + 600, ':e': entryValue({ jobs: n, batch }), ...(batch ? { ':one': 1 } : {}) };
  let condition = 'attribute_not_exists(#e)';
  if (within) {
    values[':room'] = within.share - n;
    condition += ' AND (attribute_not_exists(#n) OR #n <= :room)';
    if (batch) {
      values[':batches'] = within.batches ?? 0;
      condition += ' AND (attribute_not_exists(#b) OR #b < :batches)';
    }
  }
  return new UpdateCommand({
    TableName: tableName('meta'),
    Key: key(ns, minute),
    UpdateExpression: `${batch ? 'ADD #n :n, #b :one' : 'ADD #n :n'} SET #ttl = :ttl, #e = :e`,
    ConditionExpression: condition,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  });
}

/**
 * Adds `n` deliveries, and one batch unless `batches` is null, to `lane` if its counts stay
 * within `share` deliveries and `batches` batches; what it added (an earlier attempt's, when the
 * entry of batch `id` is there already), or 0 (nothing changed).
 */
async function tryAdd(ns: string, minute: number, id: string, n: number, share: number, batches: number | null, lane: Lane): Promise<number> {
  try {
    await ddb().send(addCommand(ns, minute, lane, id, n, batches !== null, { share, batches }));
    return n;
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    const own = refusedItem(e)[entryName(lane, id)]?.N;
    return own === undefined ? 0 : fromEntry(Number(own)).jobs;
  }
}

/**
 * Admits up to `wanted` deliveries of namespace `ns` in `minute` and `lane`, within `share` in
 * flight and `batches` batches holding any of them; returns how many it admitted (0 to
 * `wanted`), counted (with this batch) until {@link releaseDeliveries}. `batches` null: the
 * jobs ride in a batch the namespace's other lane already counts, and take no batch here.
 */
export async function admitDeliveries(ns: string, minute: number, id: string, wanted: number, share: number, batches: number | null = Number.MAX_SAFE_INTEGER, lane: Lane = 'fast'): Promise<number> {
  if (wanted <= 0) return 0;
  const all = wanted <= share ? await tryAdd(ns, minute, id, wanted, share, batches, lane) : 0;
  if (all) return all;
  // Not all fit: take what is left, read once (a concurrent batch may take it first: then none).
  const room = await roomFor(ns, minute, wanted, share, batches, lane);
  return room > 0 ? tryAdd(ns, minute, id, room, share, batches, lane) : 0;
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
 * {@link roomFor}), whatever the room: one ADD, conditional only on batch `id`'s entry being
 * absent (a re-send after a lost answer is refused, counted once). Give them back with
 * {@link releaseDeliveries}.
 */
export async function holdDeliveries(ns: string, minute: number, id: string, lane: Lane, taken: { jobs: number; batch: boolean }): Promise<void> {
  try {
    await ddb().send(addCommand(ns, minute, lane, id, taken.jobs, taken.batch));
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
  }
}

/** What one batch took in one namespace's share, per lane: its jobs and whether it took a batch. */
export type Taken = Partial<Record<Lane, { jobs: number; batch: boolean }>>;

/**
 * Gives back what batch `id` took in `minute` (one write for both lanes), exactly what its entries
 * say: conditional on each entry being there with the value `taken` says, removing it. Refused
 * (an entry absent: its write never applied, or this give-back's was applied with its answer
 * lost; or another value: an admission whose answer was lost admitted less than asked), it gives
 * back the entries the refusal's item holds, once more; nothing when none is there.
 */
export async function releaseDeliveries(ns: string, minute: number, id: string, taken: Taken): Promise<void> {
  let t = taken;
  for (let attempt = 0; attempt < 3; attempt++) {
    const lanes = (['fast', 'slow'] as const).filter((lane) => (t[lane]?.jobs ?? 0) > 0);
    if (!lanes.length) return;
    const adds: string[] = [];
    const removes: string[] = [];
    const conditions: string[] = [];
    const names: Record<string, string> = {};
    const values: Record<string, number> = {};
    for (const lane of lanes) {
      const l = t[lane]!;
      const a = ATTRS[lane];
      adds.push(`#${lane}n :${lane}n`);
      names[`#${lane}n`] = a.n;
      values[`:${lane}n`] = -l.jobs;
      if (l.batch) {
        adds.push(`#${lane}b :${lane}b`);
        names[`#${lane}b`] = a.b;
        values[`:${lane}b`] = -1;
      }
      names[`#${lane}e`] = entryName(lane, id);
      values[`:${lane}e`] = entryValue(l);
      removes.push(`#${lane}e`);
      conditions.push(`#${lane}e = :${lane}e`);
    }
    try {
      await ddb().send(
        new UpdateCommand({
          TableName: tableName('meta'),
          Key: key(ns, minute),
          UpdateExpression: `ADD ${adds.join(', ')} REMOVE ${removes.join(', ')}`,
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return;
    } catch (e) {
      if (!isConditionFailed(e)) throw e;
      const item = refusedItem(e);
      t = Object.fromEntries(lanes.flatMap((lane) => (item[entryName(lane, id)]?.N === undefined ? [] : [[lane, fromEntry(Number(item[entryName(lane, id)].N))]])));
    }
  }
}
