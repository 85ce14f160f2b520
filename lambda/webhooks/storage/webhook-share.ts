/**
 * How many webhook deliveries each namespace has in flight (keys.ts `webhookInFlight`), so that
 * one namespace's backlog takes at most its share of the delivery function's capacity
 * (lambda/webhooks/share.ts). A batch with jobs of slow webhooks admits them with one conditional
 * ADD and gives them back with one ADD when it is done: writes per namespace and batch, not per
 * job. A batch of fast jobs only reads the count when it starts ({@link roomFor}), and counts
 * itself ({@link holdDeliveries}) only if it is still running a moment later; most end before
 * that and write nothing here.
 *
 * One item per namespace holds both lanes (lambda/webhooks/rules/delivery-lanes.ts): the fast lane in
 * `in_flight` and `batches`, the slow lane in `slow_in_flight` and `slow_batches`.
 *
 * Exact under lost answers: each batch's count in a lane is also an entry of its own on the item
 * (`f_{batch id}` / `s_{batch id}`: when the batch started, its jobs and batch flag,
 * {@link entryValue}), added in the same write as the count. An admission or hold is conditional
 * on its entry being absent, and a give-back on it being there with the value it gives back,
 * removing it: a write re-sent after a lost answer (by the SDK or a retry) is refused instead of
 * counted twice, and a give-back of a write that never applied gives nothing back. A refusal
 * carries the item (`ReturnValuesOnConditionCheckFailure: ALL_OLD`, at no read cost:
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html), so the
 * caller learns what is there without a read.
 *
 * Counts a crashed batch never gave back: an entry whose batch started before
 * `ShareTime.staleBefore` belongs to a batch that is gone (Lambda stops an invocation at its
 * timeout; the caller sets the age, ../webhooks/share.ts). An admission refused, or a read, whose
 * answer such entries change (without them it would be admitted, or find more room) removes them
 * in one write subtracting their counts, conditional on each still having its value
 * ({@link reclaim}: two reclaimers at once subtract once), and the admission is tried once more; a
 * container tries this at most once per namespace every {@link RECLAIM_EVERY_SECONDS}, and a
 * reclaim that fails leaves the answer as it was. So entries exist only for batches in flight
 * (and crashed ones until they are in someone's way), and the item's TTL, moved a day ahead by
 * every write, removes an idle namespace's item. An entry adds about 21 bytes (a 14-byte name, a
 * 12-digit number): writes are 1 unit below about 40 entries, 3 at the stack's full share (record
 * 0019, test/integration/webhooks-share-item-size.test.ts).
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Lane } from '../rules/delivery-lanes';
import { ddb, isConditionFailed, tableName } from '../../core/storage/client';
import { metaKeys } from '../../core/storage/keys';
import { logger } from '../../core/observability';

/** When a batch started, and the start before which a batch is gone (Unix seconds). */
export interface ShareTime {
  start: number;
  staleBefore: number;
}

/** How long an idle namespace's item stays (s): every write moves its TTL this far past the batch's start. */
const ITEM_TTL_SECONDS = 24 * 3600;
/** Stale entries removed in one write at most (its condition names each: far below the 4 KB expression limit). */
const MAX_RECLAIM = 100;

const key = (ns: string) => metaKeys.webhookInFlight(ns);
const ATTRS: Record<Lane, { n: string; b: string }> = {
  fast: { n: 'in_flight', b: 'batches' },
  slow: { n: 'slow_in_flight', b: 'slow_batches' },
};
const LANE_OF: Record<string, Lane> = { f: 'fast', s: 'slow' };

/** The attribute of batch `id`'s entry in `lane`. */
const entryName = (lane: Lane, id: string) => `${lane[0]}_${id}`;
const ENTRY = /^([fs])_[0-9a-f]+$/;

/**
 * An entry's value: the batch's start (s), its jobs and whether it took a batch, in one number.
 * Its jobs have 5 bits: a lane's jobs in one entry are at most {@link MAX_ENTRY_JOBS} (a delivery
 * batch holds 10), and an admission asking for more is admitted 31 at most.
 */
const entryValue = (start: number, t: { jobs: number; batch: boolean }) => start * 64 + t.jobs * 2 + (t.batch ? 1 : 0);
const fromEntry = (v: number) => ({ start: Math.floor(v / 64), jobs: Math.floor((v % 64) / 2), batch: v % 2 === 1 });
/** The most jobs one entry holds (5 bits): admissions and reads admit at most this many at once. */
export const MAX_ENTRY_JOBS = 31;

/** The item's numbers, from the document client's form or from a refusal's attribute values (the document client does not unmarshall errors). */
type Numbers = Record<string, number>;
const numbersOf = (item: Record<string, unknown> | undefined): Numbers =>
  Object.fromEntries(
    Object.entries(item ?? {}).flatMap(([k, v]) => {
      const n = typeof v === 'number' ? v : (v as { N?: string } | null)?.N;
      return n === undefined ? [] : [[k, Number(n)]];
    }),
  );
const refusedItem = (e: unknown) => numbersOf((e as { Item?: Record<string, unknown> }).Item);

/** The entries of batches started before `staleBefore`. */
const staleEntries = (item: Numbers, staleBefore: number) =>
  Object.entries(item)
    .filter(([name, v]) => ENTRY.test(name) && fromEntry(v).start < staleBefore)
    .slice(0, MAX_RECLAIM);

/** A container tries to reclaim a namespace's stale entries at most once in this many seconds. */
const RECLAIM_EVERY_SECONDS = 5;
/** This container's last reclaim per namespace: when (batch start, s) and its outcome; a bounded map. */
const lastReclaim = new Map<string, { at: number; done: Promise<Numbers | undefined> }>();

/** `item`'s counts once the entries `stale` are removed (what a reclaim would leave). */
function withoutStale(item: Numbers, stale: [string, number][]): Numbers {
  const after = { ...item };
  for (const [name, v] of stale) {
    const e = fromEntry(v);
    const a = ATTRS[LANE_OF[name[0]]];
    after[a.n] = (after[a.n] ?? 0) - e.jobs;
    if (e.batch) after[a.b] = (after[a.b] ?? 0) - 1;
  }
  return after;
}

/**
 * Reclaims `item`'s stale entries ({@link reclaim}) only when removing them would change the
 * caller's answer (`helps`: a refusal that would be admitted, a read that would find more room),
 * and only if this container has not tried for `ns` in the last {@link RECLAIM_EVERY_SECONDS}:
 * a backlog's admissions all refused at once by a crashed batch's entries send one reclaim per
 * container, not one each (a refused conditional write is billed too, on the namespace's busiest
 * item: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html).
 * An admitter of the container that finds a reclaim made (or in flight) within that time uses its
 * outcome, as the reclaimer does (the item after it, from which an admission is tried once more).
 * A reclaim that fails is logged and leaves the caller's answer as it was (a refusal stays a
 * refusal); the next admitter to be refused after the 5 s tries again. Returns the item after a
 * reclaim, or undefined when none was made or it failed.
 */
async function reclaimIfHelps(ns: string, at: ShareTime, item: Numbers, helps: (after: Numbers) => boolean): Promise<Numbers | undefined> {
  const stale = staleEntries(item, at.staleBefore);
  if (!stale.length || !helps(withoutStale(item, stale))) return undefined;
  const last = lastReclaim.get(ns);
  if (last !== undefined && at.start >= last.at && at.start < last.at + RECLAIM_EVERY_SECONDS) return last.done;
  if (lastReclaim.size >= 10_000) lastReclaim.clear();
  const done = reclaim(ns, at, item).catch((e) => {
    logger.warn('webhook delivery share: reclaiming stale entries failed; the answer stands', { namespace: ns, error: (e as Error).message });
    return undefined;
  });
  lastReclaim.set(ns, { at: at.start, done });
  return done;
}

/** Whether `n` jobs (and a batch unless `batches` is null) fit in `lane` of `item`. */
const fits = (item: Numbers, lane: Lane, n: number, share: number, batches: number | null) =>
  (item[ATTRS[lane].n] ?? 0) + n <= share && (batches === null || (item[ATTRS[lane].b] ?? 0) < batches);

/** How many of `wanted` jobs fit in `lane` of `item`. */
const room = (item: Numbers, lane: Lane, wanted: number, share: number, batches: number | null) =>
  batches !== null && (item[ATTRS[lane].b] ?? 0) >= batches ? 0 : Math.max(0, Math.min(wanted, share - (item[ATTRS[lane].n] ?? 0)));

/**
 * Removes the entries of batches that are gone from `item` (as last seen), subtracting their
 * counts, in one write conditional on each entry still having its value: refused, another
 * reclaimer (or a give-back) was first, and what the refusal's item still holds stale is tried
 * again. Returns the item as it stands after (a batch's own view: concurrent writes may move it),
 * or undefined when there was nothing stale.
 */
async function reclaim(ns: string, at: ShareTime, item: Numbers): Promise<Numbers | undefined> {
  let current = item;
  let stale = staleEntries(current, at.staleBefore);
  if (!stale.length) return undefined;
  for (let attempt = 0; attempt < 3 && stale.length; attempt++) {
    const names: Record<string, string> = { '#ttl': 'ttl' };
    const values: Record<string, number> = { ':ttl': at.start + ITEM_TTL_SECONDS };
    const minus: Record<string, number> = {};
    const conditions: string[] = [];
    stale.forEach(([name, v], i) => {
      const e = fromEntry(v);
      const a = ATTRS[LANE_OF[name[0]]];
      minus[a.n] = (minus[a.n] ?? 0) - e.jobs;
      if (e.batch) minus[a.b] = (minus[a.b] ?? 0) - 1;
      names[`#e${i}`] = name;
      values[`:e${i}`] = v;
      conditions.push(`#e${i} = :e${i}`);
    });
    const adds = Object.entries(minus).map(([attr, d], i) => {
      names[`#c${i}`] = attr;
      values[`:c${i}`] = d;
      return `#c${i} :c${i}`;
    });
    try {
      const out = await ddb().send(
        new UpdateCommand({
          TableName: tableName('meta'),
          Key: key(ns),
          UpdateExpression: `REMOVE ${stale.map((_, i) => `#e${i}`).join(', ')} ADD ${adds.join(', ')} SET #ttl = :ttl`,
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return numbersOf(out.Attributes);
    } catch (e) {
      if (!isConditionFailed(e)) throw e;
      current = refusedItem(e);
      stale = staleEntries(current, at.staleBefore);
    }
  }
  return current;
}

/**
 * Adds `n` deliveries, and one batch if `batch`, to `lane`, with batch `id`'s entry, if the entry
 * is not there yet; with `within`, only if its counts stay within `share` deliveries and (when a
 * batch is added) `batches` batches.
 */
function addCommand(ns: string, at: ShareTime, lane: Lane, id: string, n: number, batch: boolean, within?: { share: number; batches: number | null }) {
  const a = ATTRS[lane];
  const names: Record<string, string> = { '#n': a.n, '#ttl': 'ttl', '#e': entryName(lane, id), ...(batch ? { '#b': a.b } : {}) };
  const values: Record<string, number> = { ':n': n, ':ttl': at.start + ITEM_TTL_SECONDS, ':e': entryValue(at.start, { jobs: n, batch }), ...(batch ? { ':one': 1 } : {}) };
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
    Key: key(ns),
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
 * entry of batch `id` is there already), or 0 (nothing changed). Refused with entries of batches
 * that are gone on the item, it reclaims them and tries once more.
 */
async function tryAdd(ns: string, at: ShareTime, id: string, n: number, share: number, batches: number | null, lane: Lane, again = true): Promise<number> {
  try {
    await ddb().send(addCommand(ns, at, lane, id, n, batches !== null, { share, batches }));
    return n;
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    const item = refusedItem(e);
    const own = item[entryName(lane, id)];
    if (own !== undefined) return fromEntry(own).jobs;
    if (again && (await reclaimIfHelps(ns, at, item, (after) => fits(after, lane, n, share, batches)))) return tryAdd(ns, at, id, n, share, batches, lane, false);
    return 0;
  }
}

/**
 * Admits up to `wanted` deliveries of namespace `ns` in `lane`, within `share` in flight and
 * `batches` batches holding any of them; returns how many it admitted (0 to `wanted`), counted
 * (with this batch, started at `at.start`) until {@link releaseDeliveries}. `batches` null: the
 * jobs ride in a batch the namespace's other lane already counts, and take no batch here.
 */
export async function admitDeliveries(ns: string, at: ShareTime, id: string, wanted: number, share: number, batches: number | null = Number.MAX_SAFE_INTEGER, lane: Lane = 'fast'): Promise<number> {
  if (wanted <= 0) return 0;
  wanted = Math.min(wanted, MAX_ENTRY_JOBS);
  const all = wanted <= share ? await tryAdd(ns, at, id, wanted, share, batches, lane) : 0;
  if (all) return all;
  // Not all fit: take what is left, read once (a concurrent batch may take it first: then none).
  const room = await roomFor(ns, at, wanted, share, batches, lane);
  return room > 0 ? tryAdd(ns, at, id, room, share, batches, lane) : 0;
}

/**
 * How many of `wanted` deliveries of `ns` in `lane` fit within `share` in flight and `batches`
 * batches (null: they ride in a batch counted in the other lane), by one strongly consistent read
 * and no write (1 read unit; and a reclaim when the item holds entries of batches that are gone).
 * What it admits is not counted until {@link holdDeliveries}.
 */
export async function roomFor(ns: string, at: ShareTime, wanted: number, share: number, batches: number | null, lane: Lane): Promise<number> {
  if (wanted <= 0) return 0;
  wanted = Math.min(wanted, MAX_ENTRY_JOBS);
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: key(ns), ConsistentRead: true }));
  const read = numbersOf(out.Item);
  const before = room(read, lane, wanted, share, batches);
  const item = (await reclaimIfHelps(ns, at, read, (after) => room(after, lane, wanted, share, batches) > before)) ?? read;
  return room(item, lane, wanted, share, batches);
}

/**
 * Counts `taken` deliveries of `ns` that are already running (admitted by {@link roomFor}),
 * whatever the room: one ADD, conditional only on batch `id`'s entry being absent (a re-send
 * after a lost answer is refused, counted once). Give them back with {@link releaseDeliveries}.
 */
export async function holdDeliveries(ns: string, at: ShareTime, id: string, lane: Lane, taken: { jobs: number; batch: boolean }): Promise<void> {
  if (taken.jobs > MAX_ENTRY_JOBS) throw new RangeError(`a share entry holds at most ${MAX_ENTRY_JOBS} jobs, not ${taken.jobs}`);
  try {
    await ddb().send(addCommand(ns, at, lane, id, taken.jobs, taken.batch));
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
  }
}

/** What one batch took in one namespace's share, per lane: its jobs and whether it took a batch. */
export type Taken = Partial<Record<Lane, { jobs: number; batch: boolean }>>;

/**
 * Gives back what batch `id` (started at `at.start`) took (one write for both lanes), exactly what
 * its entries say: conditional on each entry being there with the value `taken` says, removing it.
 * Refused (an entry absent: its write never applied, this give-back's was applied with its answer
 * lost, or a reclaim took it; or another value: an admission whose answer was lost admitted less
 * than asked), it gives back the entries the refusal's item holds, once more; nothing when none is
 * there.
 */
export async function releaseDeliveries(ns: string, at: ShareTime, id: string, taken: Taken): Promise<void> {
  let t = taken;
  for (let attempt = 0; attempt < 3; attempt++) {
    const lanes = (['fast', 'slow'] as const).filter((lane) => (t[lane]?.jobs ?? 0) > 0);
    if (!lanes.length) return;
    const adds: string[] = [];
    const removes: string[] = [];
    const conditions: string[] = [];
    const names: Record<string, string> = { '#ttl': 'ttl' };
    const values: Record<string, number> = { ':ttl': at.start + ITEM_TTL_SECONDS };
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
      values[`:${lane}e`] = entryValue(at.start, l);
      removes.push(`#${lane}e`);
      conditions.push(`#${lane}e = :${lane}e`);
    }
    try {
      await ddb().send(
        new UpdateCommand({
          TableName: tableName('meta'),
          Key: key(ns),
          UpdateExpression: `ADD ${adds.join(', ')} REMOVE ${removes.join(', ')} SET #ttl = :ttl`,
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
      t = Object.fromEntries(lanes.flatMap((lane) => (item[entryName(lane, id)] === undefined ? [] : [[lane, fromEntry(item[entryName(lane, id)])]])));
    }
  }
}
