/**
 * How an append-only log (stream partition or subscription) stores messages: a publish call's
 * messages for one log key go into as few items ("chunks") as the 400 KB item limit allows, so a
 * batch of 10 small messages costs one item write instead of ten, and a read of 10 messages one
 * 4 KB read unit per 4 KB instead of one unit per message. Pure.
 *
 * A stored message is a compact tuple, not a map: attribute names would be repeated in every
 * message and count toward the item size (and so the write units). What every message of a publish
 * shares (publish time, partition) is stored once on the chunk.
 */
import { DEFAULT_CONTENT_TYPE, type PublishedMessage } from '../../core/rules/message';

/**
 * `[position, cum, payload, content_type, properties, message_id]`: the content type is null when it
 * is the default, the properties null when empty, the message id absent for streams (their consumed
 * messages carry none). `cum` is the log's payload bytes before this message: the bytes retained
 * from a message on are the log's total minus its `cum` (lambda/logs/rules/retention.ts).
 */
export type StoredMessage = [number, number, string, string | null, Record<string, string> | null, string?];

/** A message read back from a chunk. */
export interface LogMessage {
  position: number;
  cum: number;
  payload: string;
  content_type: string;
  properties: Record<string, string>;
  message_id?: string;
  /** Payload length in UTF-8 bytes. */
  size: number;
  published_at: number;
  partition: number;
  /** Streams: the message's index among its partition's reserved messages (the partition lag). */
  pindex?: number;
}

/**
 * Estimated bytes a chunk may hold: DynamoDB's item limit is 400 KB including attribute names and
 * the chunk's own fields; the estimate (UTF-8 JSON of the tuple) is never below the stored size.
 */
export const MAX_CHUNK_BYTES = 320 * 1024;

export function encodeMessage(m: PublishedMessage, position: number, cum: number, withId: boolean): StoredMessage {
  const t: StoredMessage = [position, cum, m.payload, m.content_type === DEFAULT_CONTENT_TYPE ? null : m.content_type, Object.keys(m.properties ?? {}).length ? m.properties : null];
  if (withId) t.push(m.message_id);
  return t;
}

export function decodeMessage(t: StoredMessage, chunk: { at: number; p?: number; pc?: number; m?: StoredMessage[] }): LogMessage {
  const k = chunk.pc !== undefined && chunk.m ? chunk.m.indexOf(t) : -1;
  return {
    position: t[0],
    cum: t[1],
    payload: t[2],
    content_type: t[3] ?? DEFAULT_CONTENT_TYPE,
    properties: t[4] ?? {},
    ...(t[5] !== undefined ? { message_id: t[5] } : {}),
    size: Buffer.byteLength(t[2], 'utf8'),
    published_at: chunk.at,
    partition: chunk.p ?? 0,
    ...(k >= 0 ? { pindex: (chunk.pc as number) + k } : {}),
  };
}

/** An upper bound of the bytes a tuple takes in an item. */
export const storedBytes = (t: StoredMessage) => Buffer.byteLength(JSON.stringify(t), 'utf8') + 8;

/**
 * Splits tuples (in position order) into runs whose estimated size stays within `limit`; a tuple
 * larger than the limit gets a run of its own.
 * @example packChunks([a, b, c], () => 200, 450) // [[a, b], [c]]
 */
export function packChunks<T>(tuples: T[], sizeOf: (t: T) => number, limit = MAX_CHUNK_BYTES): T[][] {
  const out: T[][] = [];
  let run: T[] = [];
  let bytes = 0;
  for (const t of tuples) {
    const s = sizeOf(t);
    if (run.length > 0 && bytes + s > limit) {
      out.push(run);
      run = [];
      bytes = 0;
    }
    run.push(t);
    bytes += s;
  }
  if (run.length) out.push(run);
  return out;
}

/**
 * The layout of one publish call's block of positions `[start, start + n)`: each message's offset in
 * the block is its index, its `cum` is the block's starting byte count plus the payload bytes of the
 * messages before it, and each partition's last index is what the head records (`lp`) so readers
 * skip partitions with nothing new; each partition's message count (`counts`, added to the head's
 * `lc`) and each message's index among its partition's messages of the block (`indexIn`).
 * @example blockLayout([3, 5, 2], [0, 1, 0]).lastIndex // { 0: 2, 1: 1 }
 */
export function blockLayout(sizes: number[], partitions: number[]): { before: number[]; lastIndex: Record<number, number>; counts: Record<number, number>; indexIn: number[] } {
  const before: number[] = [];
  const lastIndex: Record<number, number> = {};
  const counts: Record<number, number> = {};
  const indexIn: number[] = [];
  let sum = 0;
  sizes.forEach((s, i) => {
    before.push(sum);
    sum += s;
    lastIndex[partitions[i]] = i;
    indexIn.push(counts[partitions[i]] ?? 0);
    counts[partitions[i]] = (counts[partitions[i]] ?? 0) + 1;
  });
  return { before, lastIndex, counts, indexIn };
}
