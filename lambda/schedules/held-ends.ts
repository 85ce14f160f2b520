/**
 * The handover's writes to a queue's counters item, one at a time per queue in this invocation,
 * those that wait going together: the mark before a send (`touchQueueCounters`) and the end of the
 * held part after it (a transaction: lambda/queues/storage/queue-held.ts). A tick's pages to one queue
 * send and end together, and DynamoDB refuses a transaction on an item another transaction or
 * write is changing (`TransactionConflict`), and a single write on an item a transaction holds
 * ("Transaction is ongoing for the item",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling):
 * 32 shards' pages at once failed most of theirs and left their messages claimed for two
 * minutes. Here one write per queue is in flight, and the ends that wait meanwhile go in one write
 * (fewer write units per message).
 */
import type { PublishedMessage } from '../core/rules/message';
import { byExpiryBucket, touchQueueCounters, type BucketAmounts } from '../queues/storage/queues';
import { getSchedulerItems } from './storage/scheduler';
import { addHeldOnce, MarksGoneError } from '../queues/storage/queue-held';
import { openMarkUpdates, type OpenMark } from './storage/held-packs';

/** A message whose held part ends, and its marker on its state item (`held_open`: absent on items held before markers). */
export interface HeldEnd {
  message: PublishedMessage;
  mark?: { pk: string; sk: string; entry: string };
}

interface Waiter {
  resolve: () => void;
  reject: (e: unknown) => void;
}

interface Batch {
  at: number;
  waiters: Waiter[];
  /** Ends only: the messages and their expiry buckets' TTL. */
  messages: HeldEnd[];
  ttl: number;
}

/** A write carries at most this many messages' ends (their buckets stay far under a transaction's 100 items). */
const MOST_PER_WRITE = 1000;
/** And at most this many state items' markers (with the counters and the buckets, under 100 items). */
const MOST_MARKS_PER_WRITE = 60;

interface Lane {
  writing: boolean;
  touch?: Batch;
  ends: Map<number, Batch>;
}

const lanes = new Map<string, Lane>();

function enqueue(ns: string, queueId: string, pick: (lane: Lane) => Batch | undefined, make: () => Batch, add: (b: Batch) => void, put: (lane: Lane, b: Batch) => void): Promise<void> {
  const key = `${ns}#${queueId}`;
  const lane = lanes.get(key) ?? { writing: false, ends: new Map() };
  lanes.set(key, lane);
  return new Promise<void>((resolve, reject) => {
    const b = pick(lane) ?? make();
    add(b);
    b.waiters.push({ resolve, reject });
    put(lane, b);
    if (!lane.writing) void drain(key, ns, queueId);
  });
}

/** Marks the queue's counters changed (before a send), joining a mark that waits. */
export function touchTogether(ns: string, queueId: string, at: number): Promise<void> {
  return enqueue(
    ns,
    queueId,
    (l) => l.touch,
    () => ({ at, waiters: [], messages: [], ttl: 0 }),
    (b) => (b.at = Math.max(b.at, at)),
    (l, b) => (l.touch = b),
  );
}

/**
 * Ends the held part of `messages` in the queue (their expiry buckets by `ttl`): resolves once a
 * write that carried them applied, rejects when it failed (the caller leaves them for the retry).
 */
export function endHeldTogether(ns: string, queueId: string, messages: HeldEnd[], ttl: number, at: number): Promise<void> {
  return enqueue(
    ns,
    queueId,
    (l) => l.ends.get(ttl),
    () => ({ at, waiters: [], messages: [], ttl }),
    (b) => {
      b.messages.push(...messages);
      b.at = Math.max(b.at, at);
    },
    (l, b) => l.ends.set(ttl, b),
  );
}

async function drain(key: string, ns: string, queueId: string): Promise<void> {
  const lane = lanes.get(key) as Lane;
  lane.writing = true;
  for (;;) {
    // Marks first: a send waits on its mark, and ends only follow sends.
    const touch = lane.touch;
    const ends = touch ? undefined : lane.ends.values().next().value;
    const batch = touch ?? ends;
    if (!batch) break;
    if (touch) lane.touch = undefined;
    else lane.ends.delete(batch.ttl);
    try {
      if (touch) await touchQueueCounters(ns, queueId, batch.at);
      else for (const part of chunks(batch.messages)) await endHeld(ns, queueId, part, batch.ttl, batch.at);
      for (const w of batch.waiters) w.resolve();
    } catch (e) {
      for (const w of batch.waiters) w.reject(e);
    }
  }
  lane.writing = false;
  lanes.delete(key);
}

/** Ends cut into writes of at most {@link MOST_PER_WRITE} messages and {@link MOST_MARKS_PER_WRITE} state items. */
function chunks(ends: HeldEnd[]): HeldEnd[][] {
  const out: HeldEnd[][] = [];
  let cut: HeldEnd[] = [];
  let items = new Set<string>();
  for (const e of ends) {
    const item = e.mark ? `${e.mark.pk}#${e.mark.sk}` : undefined;
    if (cut.length >= MOST_PER_WRITE || (item && !items.has(item) && items.size >= MOST_MARKS_PER_WRITE)) {
      out.push(cut);
      cut = [];
      items = new Set();
    }
    cut.push(e);
    if (item) items.add(item);
  }
  if (cut.length) out.push(cut);
  return out;
}

/**
 * Ends the held part of `ends` once each: with the totals and buckets, each marked message's
 * entry leaves its state item's `held_open`, conditional on its being there. Two handovers of one
 * message (a second tick taking over a claim that expired while the first's finish was late)
 * both send it (at least once), but only one ends its held part: ending it twice would leave the
 * held count below what is held, and the quiet-queue reconciliation would undercount. A write
 * refused because some entries were taken out already is sent again without their messages
 * (nothing of it was applied: a cancelled transaction writes nothing).
 */
async function endHeld(ns: string, queueId: string, ends: HeldEnd[], ttl: number, at: number): Promise<void> {
  // One end per marker entry: the same message twice in a write would end its part twice.
  const seen = new Set<string>();
  let left = ends.filter((e) => {
    const id = e.mark && `${e.mark.pk}#${e.mark.sk}#${e.mark.entry}`;
    if (!id) return true;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
  while (left.length) {
    const marks = new Map<string, OpenMark>();
    for (const e of left) {
      if (!e.mark) continue;
      const key = `${e.mark.pk}#${e.mark.sk}`;
      const m = marks.get(key) ?? { pk: e.mark.pk, sk: e.mark.sk, entries: [] };
      m.entries.push(e.mark.entry);
      marks.set(key, m);
    }
    const list = [...marks.values()];
    try {
      return await endTotals(ns, queueId, left.map((e) => e.message), ttl, at, list);
    } catch (e) {
      if (!(e instanceof MarksGoneError)) throw e;
      // Of the items refused, the entries still open (another handover ended only some) go again.
      const now = await getSchedulerItems<{ pk: string; sk: string; held_open?: Set<string> }>(e.gone.map((k) => ({ pk: list[k].pk, sk: list[k].sk })));
      const open = new Map(now.map((i) => [`${i.pk}#${i.sk}`, i.held_open ?? new Set<string>()]));
      const gone = new Set(e.gone.map((k) => `${list[k].pk}#${list[k].sk}`));
      left = left.filter((x) => !x.mark || !gone.has(`${x.mark.pk}#${x.mark.sk}`) || open.get(`${x.mark.pk}#${x.mark.sk}`)?.has(x.mark.entry));
    }
  }
}

async function endTotals(ns: string, queueId: string, messages: PublishedMessage[], ttl: number, at: number, marks: OpenMark[]): Promise<void> {
  const buckets = byExpiryBucket(messages, ttl, (m) => m.published_at, (m) => m.size, { held: true, count: false });
  const bytes = messages.reduce((n, m) => n + m.size, 0);
  const negative: BucketAmounts = new Map([...buckets].map(([end, a]) => [end, { count: 0, bytes: 0, heldCount: -(a.heldCount ?? 0), heldBytes: -(a.heldBytes ?? 0) }]));
  // The totals and the buckets in one transaction: both end, or the retry ends both.
  await addHeldOnce(ns, queueId, { count: 0, bytes: 0, heldCount: -messages.length, heldBytes: -bytes }, at, undefined, negative, openMarkUpdates(marks));
}
