/**
 * The handover's writes to a queue's counters item, one at a time per queue in this invocation,
 * those that wait going together: the mark before a send (`touchQueueCounters`) and the end of the
 * held part after it (a transaction: lambda/storage/queue-held.ts). A tick's pages to one queue
 * send and end together, and DynamoDB refuses a transaction on an item another transaction or
 * write is changing (`TransactionConflict`), and a single write on an item a transaction holds
 * ("Transaction is ongoing for the item",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling):
 * 32 shards' pages at once failed most of theirs and left their messages claimed for two
 * minutes. Here one write per queue is in flight, and the ends that wait meanwhile go in one write
 * (fewer write units per message).
 */
import type { PublishedMessage } from '../domain/message';
import { byExpiryBucket, touchQueueCounters, type BucketAmounts } from '../storage/queues';
import { addHeldOnce } from '../storage/queue-held';

interface Waiter {
  resolve: () => void;
  reject: (e: unknown) => void;
}

interface Batch {
  at: number;
  waiters: Waiter[];
  /** Ends only: the messages and their expiry buckets' TTL. */
  messages: PublishedMessage[];
  ttl: number;
}

/** A write carries at most this many messages' ends (their buckets stay far under a transaction's 100 items). */
const MOST_PER_WRITE = 1000;

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
export function endHeldTogether(ns: string, queueId: string, messages: PublishedMessage[], ttl: number, at: number): Promise<void> {
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
      else for (let i = 0; i < batch.messages.length; i += MOST_PER_WRITE) await endHeld(ns, queueId, batch.messages.slice(i, i + MOST_PER_WRITE), batch.ttl, batch.at);
      for (const w of batch.waiters) w.resolve();
    } catch (e) {
      for (const w of batch.waiters) w.reject(e);
    }
  }
  lane.writing = false;
  lanes.delete(key);
}

async function endHeld(ns: string, queueId: string, messages: PublishedMessage[], ttl: number, at: number): Promise<void> {
  const buckets = byExpiryBucket(messages, ttl, (m) => m.published_at, (m) => m.size, { held: true, count: false });
  const bytes = messages.reduce((n, m) => n + m.size, 0);
  const negative: BucketAmounts = new Map([...buckets].map(([end, a]) => [end, { count: 0, bytes: 0, heldCount: -(a.heldCount ?? 0), heldBytes: -(a.heldBytes ?? 0) }]));
  // The totals and the buckets in one transaction: both end, or the retry ends both.
  await addHeldOnce(ns, queueId, { count: 0, bytes: 0, heldCount: -messages.length, heldBytes: -bytes }, at, undefined, negative);
}
