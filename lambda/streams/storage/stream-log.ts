/**
 * Stream logs (table `streamLog`): the publish sink that appends to every bound stream, and the
 * reads of consume and trimming. A stream's log is one key per partition
 * (`{stream id}#{partition}`), so appends to a stream of P partitions spread over P partition keys;
 * a publish call writes one chunk per partition it touches (lambda/logs/rules/log-chunks.ts).
 *
 * Offsets are per stream (DESIGN.md section 7): one reservation on the stream's head per publish
 * call (../../logs/storage/log-reservations.ts) gives the call a block of consecutive offsets in message order.
 */
import { randomInt } from 'node:crypto';
import { ttlSeconds } from '../../core/storage/keys';
import type { Binding } from '../../core/storage/resources';
import { putChunks, readLive, unstoredOf, type ChunkItem, type LiveEvent } from '../../logs/storage/log-chunks';
import { finishBlock, mayStillWrite, reserveBlock, tooLateError } from '../../logs/storage/log-reservations';
import type { LogHead, LogRef } from '../../logs/storage/log-heads';
import type { PublishedMessage } from '../../core/rules/message';
import { blockLayout, encodeMessage, packChunks, storedBytes, type LogMessage } from '../../logs/rules/log-chunks';
import { partitionFor } from '../rules';
import { announceArrival } from '../../logs/storage/log-arrivals';
import { markBlock } from '../../logs/storage/partition-marks';

/** Settings a publish needs, kept on the stream's binding. */
export interface StreamBindingSettings {
  partition_count: number;
  retention_days: number;
  /** The stream's partition marks live on their own item (../../logs/storage/partition-marks.ts; set at create). */
  marks?: 'item';
}

const DAY_MS = 86_400_000;
/** Chunks live this long past retention: readers filter by age anyway; this covers clock skew. */
const TTL_MARGIN_MS = 60_000;

export const streamLogKey = (streamId: string, partition: number) => `${streamId}#${partition}`;

/** Round-robin position per stream in this container; starts anywhere so containers spread. */
const roundRobin = new Map<string, number>();
function nextRoundRobin(streamId: string): number {
  const n = roundRobin.get(streamId) ?? randomInt(1 << 30);
  if (roundRobin.size > 10_000) roundRobin.clear();
  roundRobin.set(streamId, n + 1);
  return n;
}

/**
 * Appends one publish call's messages to one stream: reserve the block, write one chunk per
 * partition (more when a partition's messages exceed a chunk), then write the reservation's record,
 * recording as a gap what was not stored. The keyless messages of one call go to one partition,
 * the next one in round robin (Kafka's sticky partitioner): one chunk instead of one per partition.
 */
async function appendToStream(ns: string, now: number, b: Binding, messages: PublishedMessage[]): Promise<void> {
  const s = b.settings as unknown as StreamBindingSettings;
  const sticky = nextRoundRobin(b.id);
  const partitions = messages.map((m) => partitionFor(m.partition_key, s.partition_count, sticky));
  const layout = blockLayout(messages.map((m) => m.size), partitions);
  const ref: LogRef = { namespace: ns, id: b.id };
  const bytes = messages.reduce((n, m) => n + m.size, 0);
  const ownMarks = s.marks === 'item';
  const r = await reserveBlock(ref, { count: messages.length, bytes, ...(ownMarks ? {} : { lastIndex: layout.lastIndex, counts: layout.counts }) });
  if (!r) return; // deleted since the binding was read
  if (!mayStillWrite(r)) {
    // Stalled since it reserved: readers stop waiting for the block soon; write nothing, give it back.
    await finishBlock(ref, r, { n: messages.length, b: bytes });
    throw tooLateError();
  }
  // Marked before any chunk is written and before the reservation clears (../../logs/storage/partition-marks.ts);
  // when it fails, nothing is written and the block is given back.
  const lc = ownMarks
    ? await markBlock(ref, r.start, layout).catch(async (e: unknown) => {
        await finishBlock(ref, r, { n: messages.length, b: bytes });
        throw e;
      })
    : r.lc;
  const byPartition = new Map<number, number[]>();
  partitions.forEach((p, i) => byPartition.set(p, [...(byPartition.get(p) ?? []), i]));
  const chunks: { item: ChunkItem; indexes: number[] }[] = [];
  for (const [p, indexes] of [...byPartition].sort((x, y) => x[0] - y[0])) {
    const tuples = indexes.map((i) => ({ i, t: encodeMessage(messages[i], r.start + i, r.cum + layout.before[i], false) }));
    for (const run of packChunks(tuples, (x) => storedBytes(x.t))) {
      chunks.push({
        indexes: run.map((x) => x.i),
        item: {
          log: streamLogKey(b.id, p),
          last: run[run.length - 1].t[0],
          first: run[0].t[0],
          at: now,
          p,
          ...(lc ? { pc: (lc[String(p)] ?? 0) + layout.indexIn[run[0].i] } : {}),
          n: run.length,
          b: run.reduce((n, x) => n + messages[x.i].size, 0),
          ttl: ttlSeconds(now + s.retention_days * DAY_MS + TTL_MARGIN_MS),
          m: run.map((x) => x.t),
        },
      });
    }
  }
  const { failed, error } = await putChunks('streamLog', chunks.map((c) => c.item));
  const lost = failed.map((i) => chunks[i].item).reduce((acc, c) => ({ n: acc.n + c.n, b: acc.b + c.b }), { n: 0, b: 0 });
  const settled = await finishBlock(ref, r, lost, () => unstoredOf('streamLog', failed.map((i) => chunks[i].item)));
  // Not known to be recorded (storage unreachable for the record's tries and the settle of its
  // outcome): a 503, though its block may be complete and read (docs/streams-and-subscriptions.md).
  if (!settled) throw error ?? tooLateError();
  // A write reported failed but found stored (its answers lost) does not fail the publish.
  if (error && settled.n !== 0) throw error;
  // Recorded complete, however late: no settle can have recorded it as a gap (../../logs/storage/log-reservations.ts
  // `finishBlock`), so readers read it.
  announceArrival(b.id);
}

/** The stream sink of publish: appends the messages to every bound stream. */
export async function appendToStreams(ctx: { namespace: string; now: number }, bindings: Binding[], messages: PublishedMessage[]): Promise<void> {
  await Promise.all(bindings.map((b) => appendToStream(ctx.namespace, ctx.now, b, messages)));
}

/**
 * Partitions that may hold offsets at or after `from`: those whose last reserved offset (`lp`) is
 * not below it. An idle partition of a busy stream is then not read at all. A head without its
 * marks (a refused reservation's, of a stream whose marks have their own item) names every one.
 */
export function partitionsFrom(head: LogHead, from: number, only?: number): number[] {
  const all = only !== undefined ? [only] : Array.from({ length: head.partition_count }, (_, p) => p);
  if (!head.lp) return all;
  return all.filter((p) => (head.lp?.[String(p)] ?? -1) >= from);
}

/**
 * Messages of a stream with `from <= offset < to` in the given partitions, in offset order, those
 * `gone` (past retention or the size cap) reported as passed and skipped by position
 * (../../logs/storage/log-chunks.ts `readLive`), within a read budget.
 */
export function readStream(
  streamId: string,
  partitions: number[],
  o: { from: number; to: number; want: number; maxReadBytes: number; deadline: number; messageBytes?: number },
  gone: { exact(m: LogMessage): boolean; skip(m: LogMessage): boolean },
): AsyncGenerator<LiveEvent> {
  return readLive('streamLog', partitions.map((p) => streamLogKey(streamId, p)), { ...o, maxPageChunks: 100, consistent: true }, gone);
}
