/**
 * Stream consumer groups (docs/streams-and-subscriptions.md "Read and commit"): each group of the
 * run starts a round with `start_offset` earliest, latest, an integer, or none (a restart: it
 * resumes at its committed offset), reads pages, and commits some of them, reading the next page
 * without `start_offset` after a commit the API acknowledged. Each page is recorded with the start
 * it was read from (when the client can know it) for ./checkers-streams.ts.
 */
import { markerOf, type Ledger } from './ledger';
import type { World } from './world';
import type { LatencyRule } from '../faults/fault-kinds';
import { tableName } from '../../lambda/core/storage/client';

/** A chunk put held before it reached DynamoDB: its log table, the step, when it was sent, and its release. */
export interface LateChunk {
  table: 'streamLog' | 'subscriptionLog';
  step: number;
  at: number;
  /** Settles when the put goes on to the engine: true once its block was settled as a gap, false when the wait gave up. */
  released: Promise<boolean>;
}

/** How long a late chunk put waits at most for its block to be settled before it goes on anyway. */
const LATE_CHUNK_MAX_MS = 3 * 60_000;

/** A value of the SDK call's input, marshalled (`{ S }`, `{ N }`) or not. */
const plainValue = (v: unknown) => (v && typeof v === 'object' ? ((v as { S?: string; N?: string }).S ?? Number((v as { N?: string }).N)) : v);

/**
 * A latency rule that holds a chunk put of this step's burst to the stream's log table and one to
 * the subscription's (a `BatchWriteItem` of the log table holding the burst's `s{step}.` markers)
 * before it reaches the engine, until its block was settled as dead (a gap over its first
 * position on the head or a gap page, or `earliest_offset` past it): a put sent within the
 * publish's write window that lands after the settle, as AWS allows (the client sets no request
 * timeout; docs/design/0001-log-storage.md "Gaps are absent"). The publish is cut off with 504 at
 * 29 s meanwhile. While it waits, the run's logs are visited as the sweeper visits them. Readers
 * must then pass its messages, as the count does (./checkers-streams.ts `countsAgree`).
 */
export function lateChunkRule(w: Pick<World, 'inGap' | 'sweepLogs'>, step: number, late: LateChunk[]): LatencyRule {
  const left = new Set<LateChunk['table']>(['streamLog', 'subscriptionLog']);
  // The tenth write of the burst to each table, not the first: on a fresh log the first block is
  // position 0, and once settled the sweeper moves `earliest_offset` past its gap (it holds no
  // message), where no reader reads; a gap between messages is what readers must pass.
  const seen = new Map<LateChunk['table'], number>();
  const burst = new RegExp(`s${step}\\.\\d+\\.\\d+\\.\\d+`);
  const held = new Map<unknown, { table: LateChunk['table']; item: Record<string, unknown> }>();
  const tableOf = (input: Record<string, unknown>) => {
    const items = (input.RequestItems ?? {}) as Record<string, unknown>;
    for (const table of left) {
      const writes = items[tableName(table)];
      // A batch write (a list of requests), not a batch get (`{ Keys }`), of this burst's messages.
      if (!Array.isArray(writes) || !burst.test(JSON.stringify(writes))) continue;
      const n = (seen.get(table) ?? 0) + 1;
      seen.set(table, n);
      if (n >= 10) return { table, item: (writes[0] as { PutRequest?: { Item?: Record<string, unknown> } }).PutRequest?.Item ?? {} };
    }
    return undefined;
  };
  return {
    service: 'dynamodb',
    ms: 0,
    matches: (input) => {
      const found = tableOf(input);
      if (!found) return false;
      left.delete(found.table);
      held.set(input, found);
      return true;
    },
    hold: (input) => {
      const { table, item } = held.get(input)!;
      // The log's id: a stream chunk's log key is `{id}#{partition}`, a subscription's `{id}`.
      const id = String(plainValue(item.log)).split('#')[0];
      const first = Number(plainValue(item.first));
      const at = Date.now();
      const released = (async () => {
        while (Date.now() - at < LATE_CHUNK_MAX_MS) {
          if (await w.inGap(id, first).catch(() => false)) return true;
          await new Promise((r) => setTimeout(r, 1000));
          // The sweeper's own visit of the run's logs: its walk of every namespace in the tables
          // may take minutes to reach the run's (the publishes' watermark moves settle too).
          await w.sweepLogs().catch(() => undefined);
        }
        return false;
      })();
      late.push({ table, step, at, released });
      return released.then(() => undefined);
    },
  };
}

export interface StreamPage {
  group: string;
  step: number;
  /** The offset the page must start at: the explicit start, or the acknowledged commit; undefined when unknown (latest, or after a commit that may or may not have taken effect). */
  from?: number;
  how: 'earliest' | 'latest' | 'offset' | 'committed';
  messages: { offset: number; partition: number; marker: string }[];
  next: number;
}

export interface StreamGroupSeen {
  pages: StreamPage[];
  /** Per group: its committed offset as the API acknowledged it; 'unknown' after a 5xx or unanswered commit. */
  committed: Map<string, number | 'unknown'>;
  /** The largest next_offset any group saw (integer starts are drawn below it). */
  end: number;
}

export const newStreamGroupSeen = (): StreamGroupSeen => ({ pages: [], committed: new Map(), end: 0 });

type Msg = { offset: number; partition: number; payload: string };

export async function actStreamGroups(w: World, seen: StreamGroupSeen, a: { groups: number; rounds: number; pages: number }, step: number, random: () => number): Promise<void> {
  const { ledger, names } = w;
  const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
  const plans = Array.from({ length: a.groups }, () =>
    Array.from({ length: a.rounds }, () => ({ how: (['earliest', 'latest', 'offset', 'committed'] as const)[int(0, 3)], at: random(), pages: Array.from({ length: a.pages }, () => ({ max: int(20, 400), commit: random() < 0.6 })) })),
  );
  await Promise.all(
    plans.map(async (rounds, g) => {
      const group = `${names.root}-g${g}`;
      for (const round of rounds) {
        let how: StreamPage['how'] = round.how;
        let start: number | string | undefined = how === 'earliest' ? 'earliest' : how === 'latest' ? 'latest' : how === 'offset' ? Math.floor(round.at * seen.end) : undefined;
        for (const page of round.pages) {
          const c = seen.committed.get(group);
          const from = how === 'earliest' ? 0 : how === 'offset' ? (start as number) : how === 'committed' ? (c === undefined ? 0 : c === 'unknown' ? undefined : c) : undefined;
          const got = await ledger.call('stream-group', 'POST', `/streams/${names.stream}/messages/consume`, { consumer_group: group, max_messages: page.max, timeout_seconds: 0, ...(start === undefined ? {} : { start_offset: start }) });
          if (got.status !== 200) break;
          const d = got.body!.data as { messages: Msg[]; next_offset: number };
          seen.pages.push({ group, step, from, how, messages: d.messages.map((m) => ({ offset: m.offset, partition: m.partition, marker: markerOf(m.payload) ?? '?' })), next: d.next_offset });
          seen.end = Math.max(seen.end, d.next_offset);
          if (!d.messages.length) break;
          // The next page: after a commit the API acknowledged, without start_offset (it resumes
          // there); otherwise from next_offset as the client's own position.
          if (page.commit) {
            const k = await ledger.call('stream-group', 'POST', `/streams/${names.stream}/offsets/commit`, { consumer_group: group, offset: d.next_offset });
            if (k.status === 200) seen.committed.set(group, d.next_offset);
            else if (k.status === 0 || k.status >= 500) seen.committed.set(group, 'unknown');
            if (k.status === 200) {
              how = 'committed';
              start = undefined;
              continue;
            }
          }
          how = 'offset';
          start = d.next_offset;
        }
      }
    }),
  );
}

/** The whole stream with its offsets, read from 0 once everything settled (the checker's truth). */
export async function readOffsets(ledger: Ledger, stream: string): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  let next = 0;
  for (let pages = 0; pages < 500; pages++) {
    const a = await ledger.call('checker', 'POST', `/streams/${stream}/messages/consume`, { consumer_group: 'offsets', start_offset: next, max_messages: 1000, timeout_seconds: 0 });
    if (a.status !== 200) {
      await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    const d = a.body!.data as { messages: Msg[]; next_offset: number };
    for (const m of d.messages) out.set(m.offset, markerOf(m.payload) ?? '?');
    const moved = d.next_offset !== next;
    next = d.next_offset;
    if (!d.messages.length && !moved) break;
  }
  return out;
}
