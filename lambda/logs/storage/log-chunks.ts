/**
 * Chunk items of the log tables (`streamLog`, `subscriptionLog`; layout in ../../storage/tables.ts and
 * lambda/logs/rules/log-chunks.ts): writing a publish call's chunks, reading messages in position order
 * across several log keys (a stream's partitions), and the reads and deletes of settling and
 * purging. Every read is a Query on one log key from a position on: its cost is the chunks it
 * returns, whatever the log holds before or after them.
 */
import { QueryCommand, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import { batchWrite, ddb, tableName } from '../../core/storage/client';
import { batchGet, putEach } from '../../core/storage/batch';
import type { TableId } from '../../core/storage/tables';
import { decodeMessage, type LogMessage, type StoredMessage } from '../rules/log-chunks';

export type LogTable = Extract<TableId, 'streamLog' | 'subscriptionLog'>;

export interface ChunkItem {
  /** Partition key: the log (a stream partition or a subscription). */
  log: string;
  /** Sort key: the chunk's last position. */
  last: number;
  first: number;
  /** Publish time (epoch ms) of every message of the chunk. */
  at: number;
  /** Stream partition. */
  p?: number;
  /** Stream partition: its message count before the chunk's first message (the partition lag). */
  pc?: number;
  /** Messages and payload bytes in the chunk (settling a dead publish counts them). */
  n: number;
  b: number;
  /** Epoch seconds after which DynamoDB TTL deletes the chunk. */
  ttl: number;
  m: StoredMessage[];
}

/** Writes the chunks; reports those not confirmed stored (../../storage/batch.ts `putEach`). */
export const putChunks = (table: LogTable, chunks: ChunkItem[]) => putEach(tableName(table), chunks as unknown as Record<string, unknown>[]);

/**
 * Messages and payload bytes of `chunks` that are not stored: a write reported failed may have
 * been applied (its answer lost on every attempt), so a publish reads its failed chunks back
 * before recording them as a gap (which would make message_count count too few).
 */
export async function unstoredOf(table: LogTable, chunks: ChunkItem[]): Promise<{ n: number; b: number }> {
  const key = (c: { log: string; last: number }) => `${c.log}\u0000${c.last}`;
  const found = await batchGet<ChunkItem>(tableName(table), chunks.map((c) => ({ log: c.log, last: c.last })), true);
  const stored = new Set(found.map(key));
  return chunks.filter((c) => !stored.has(key(c))).reduce((acc, c) => ({ n: acc.n + c.n, b: acc.b + c.b }), { n: 0, b: 0 });
}

export interface MergeOptions {
  /** First position to return. */
  from: number;
  /** First position not to return (the stable horizon: every chunk below it ends below it). */
  to: number;
  /**
   * About how many messages the caller will take. The first page of each log key asks for the
   * chunks that end within the next `want` positions (those hold the first `want` messages of the
   * merged log, but for one chunk straddling the end), so a consume reads what it returns and
   * little more: a Query's read units are the bytes of what it returns. Later pages ask for as
   * many chunks as should hold what is still wanted, judged by the chunks seen so far. A caller
   * that may stop at the first message (the sweeper's walk) asks for 1.
   */
  want: number;
  /** Chunks per Query page and log key at most: bounds what is held in memory at once. */
  maxPageChunks: number;
  /** Strongly consistent (consumers, sweeper) or not. */
  consistent?: boolean;
  /**
   * Chunk bytes (payload and about 64 bytes per message) after which no further page is read:
   * what was read is still yielded, then the merge ends early (the caller answers the position it
   * reached). Unbounded when absent.
   */
  maxReadBytes?: number;
  /** Epoch ms after which no further page is read (as `maxReadBytes`). */
  deadline?: number;
  /**
   * Ends a page read in progress, the SDK's retries of it included (a consume's answer deadline,
   * which `deadline` alone bounds only between pages): the merge throws the SDK's `AbortError`.
   */
  abortSignal?: AbortSignal;
  /**
   * The log's average payload bytes per message (the head's `next_bytes / next`): with
   * `maxReadBytes`, bounds the positions of the first pages when this container has not read the
   * log key lately (what it read lately wins: a lifetime average never forgets). Pages are bounded
   * by bytes too: every page asks for at most the log key's share of the budget left, in chunks of
   * the size seen on this read or lately, and a log key never read here starts with one chunk. So
   * 64 partitions of 100 KB messages after 60,000 tiny ones read about what they answer, not 64
   * pages of 1 MB.
   */
  messageBytes?: number;
}

/** What a merge has read so far (the budget of `maxReadBytes` / `deadline`). */
interface ReadTally {
  bytes: number;
  /** Log keys merged: each page asks for its share of the bytes left. */
  keys: number;
}

interface LogCursor {
  log: string;
  buffer: LogMessage[];
  /** The next chunk to read is the first whose last position is at or after this. */
  lo: number;
  /**
   * No chunk not read yet holds a position below this: after the last chunk read (a log key's
   * chunks hold disjoint, increasing ranges). Not `lo`: a chunk past a page's upper bound may
   * start below it.
   */
  floor: number;
  done: boolean;
  /** Chunks, messages and chunk bytes read so far (they guide the next page's size). */
  chunks: number;
  messages: number;
  bytes: number;
}

/** Bytes a chunk holds per message beside its payload, about (the tally of `maxReadBytes`). */
const CHUNK_MESSAGE_BYTES = 64;
/** A guess of messages per chunk before any is seen: small batches are the common case. */
const FIRST_GUESS_PER_CHUNK = 4;
/**
 * What the last reads of each log key in this container saw: messages and bytes per chunk, a
 * moving average that weighs the last page as much as all before it, so it follows the sizes now
 * being read, not the log's lifetime (consumers read the same logs again and again). A log key
 * not seen yet has no estimate: its first page asks for one chunk (one small page), and later
 * pages are sized from what that page held.
 */
const recent = new Map<string, { perChunk: number; chunkBytes: number }>();

function remember(log: string, chunks: number, messages: number, bytes: number): void {
  if (!chunks) return;
  const seen = { perChunk: Math.max(1, messages / chunks), chunkBytes: bytes / chunks };
  const was = recent.get(log);
  if (recent.size > 10_000) recent.clear();
  recent.set(log, was ? { perChunk: (was.perChunk + seen.perChunk) / 2, chunkBytes: (was.chunkBytes + seen.chunkBytes) / 2 } : seen);
}

/** Reads the next page of one log key into its buffer, keeping positions in [from, to). */
async function fill(table: LogTable, c: LogCursor, o: MergeOptions, wanted: number, tally: ReadTally): Promise<void> {
  const last = o.to - 1;
  const known = recent.get(c.log);
  // First page: the chunks ending within the wanted positions (as many as the read budget holds
  // at the message size read lately, else the log's average), as many as should hold this log
  // key's share of them; then by the chunks seen.
  const bounded = c.chunks === 0 && c.lo === o.from && o.want > 1;
  const budgeted = o.maxReadBytes !== undefined;
  const messageBytes = known ? known.chunkBytes / known.perChunk - CHUNK_MESSAGE_BYTES : o.messageBytes;
  const window = budgeted && messageBytes !== undefined && messageBytes > 0 ? Math.min(o.want, Math.max(1, Math.floor((o.maxReadBytes as number) / (messageBytes + CHUNK_MESSAGE_BYTES)))) : o.want;
  const hi = bounded ? Math.min(last, o.from + window - 1) : last;
  const perChunk = c.chunks ? Math.max(1, c.messages / c.chunks) : (known?.perChunk ?? FIRST_GUESS_PER_CHUNK);
  let limit = Math.min(o.maxPageChunks, Math.max(1, Math.ceil(wanted / perChunk)));
  if (budgeted) {
    // This log key's share of the bytes left, in chunks as large as seen on this read (else
    // lately): at least one. A log key never read here starts with one chunk, whatever the log's
    // lifetime average says (a long history of tiny messages before large ones would make every
    // log key read a 1 MB page at once).
    const chunkBytes = c.chunks ? c.bytes / c.chunks : known?.chunkBytes;
    limit = chunkBytes === undefined ? 1 : Math.min(limit, Math.max(1, Math.floor(((o.maxReadBytes as number) - tally.bytes) / tally.keys / chunkBytes)));
  }
  const page: QueryCommandOutput = await ddb().send(
    new QueryCommand({
      TableName: tableName(table),
      KeyConditionExpression: '#log = :l AND #last BETWEEN :lo AND :hi',
      ExpressionAttributeNames: { '#log': 'log', '#last': 'last' },
      ExpressionAttributeValues: { ':l': c.log, ':lo': c.lo, ':hi': hi },
      ConsistentRead: o.consistent ?? true,
      Limit: limit,
    }),
    { abortSignal: o.abortSignal },
  );
  const chunks = (page.Items ?? []) as ChunkItem[];
  for (const chunk of chunks) {
    const bytes = (chunk.b ?? 0) + CHUNK_MESSAGE_BYTES * chunk.m.length;
    tally.bytes += bytes;
    c.bytes += bytes;
    c.chunks++;
    c.messages += chunk.m.length;
    for (const t of chunk.m) if (t[0] >= o.from && t[0] < o.to) c.buffer.push(decodeMessage(t, chunk));
  }
  // Stopped by its Limit or DynamoDB's 1 MB page: go on after the last chunk; else after `hi`.
  c.lo = page.LastEvaluatedKey && chunks.length ? chunks[chunks.length - 1].last + 1 : hi + 1;
  if (chunks.length) c.floor = chunks[chunks.length - 1].last + 1;
  if (c.lo > last) c.done = true;
  remember(c.log, chunks.length, chunks.reduce((n, x) => n + x.m.length, 0), chunks.reduce((n, x) => n + (x.b ?? 0) + CHUNK_MESSAGE_BYTES * x.m.length, 0));
}

/**
 * Messages of `logs` with `from <= position < to`, in position order (a k-way merge of the log
 * keys), fetched lazily a page per log key at a time. Stop iterating to stop reading.
 */
export async function* readMerged(table: LogTable, logs: string[], o: MergeOptions): AsyncGenerator<LogMessage> {
  if (o.to <= o.from || logs.length === 0) return;
  const cursors: LogCursor[] = logs.map((log) => ({ log, buffer: [], lo: o.from, floor: o.from, done: false, chunks: 0, messages: 0, bytes: 0 }));
  let yielded = 0;
  // The positions yielded last, all of them from `run.from` to `run.to` (a position is in one log
  // key only: a stream's offsets are the stream's, not its partitions').
  const run = { from: -1, to: -2 };
  const tally: ReadTally = { bytes: 0, keys: logs.length };
  const spent = () => (o.maxReadBytes !== undefined && tally.bytes >= o.maxReadBytes) || (o.deadline !== undefined && Date.now() >= o.deadline);
  for (;;) {
    // Each log key's share of what is still wanted (never more than the positions left in the
    // range); once past `want` (expired messages skipped, a walk going on), pages grow with what
    // was read so far.
    const left = Math.min(yielded < o.want ? o.want - yielded : yielded, o.to - o.from - yielded);
    const wanted = Math.max(1, Math.ceil(left / cursors.length));
    // A log key with nothing buffered may hold the smallest position only from its `floor` on, so
    // it is read only when that is not past the smallest position buffered elsewhere, and when not
    // every position from its floor to that one was just yielded from other log keys (positions are
    // unique across them): a partition is not read ahead of the answer at each message it gives
    // (64 partitions of 100 KB messages read each partition's next chunk per message answered).
    // A page may hold nothing in range: read on until the smallest is known.
    // Out of budget: stop before a page; the merge ends there.
    const smallest = () => cursors.reduce((min, c) => (c.buffer.length ? Math.min(min, c.buffer[0].position) : min), Infinity);
    const answered = (lo: number, below: number) => below <= lo || (run.from <= lo && below - 1 <= run.to);
    const unknown = () => {
      const floor = smallest();
      return cursors.filter((c) => c.buffer.length === 0 && !c.done && c.floor <= floor && !answered(c.floor, floor));
    };
    for (let empty = unknown(); empty.length; empty = unknown()) {
      if (spent()) return;
      await Promise.all(empty.map((c) => fill(table, c, o, wanted, tally)));
    }
    let best: LogCursor | undefined;
    for (const c of cursors) if (c.buffer.length && (!best || c.buffer[0].position < best.buffer[0].position)) best = c;
    if (!best) return;
    yielded++;
    const m = best.buffer.shift() as LogMessage;
    if (m.position === run.to + 1) run.to = m.position;
    else {
      run.from = m.position;
      run.to = m.position;
    }
    yield m;
  }
}

/**
 * The message with the smallest position in [at, to) across `logs`, from one Query of one chunk
 * per log key (a chunk's sort key is its last position, so the first chunk whose last position is
 * at or after `at` holds it, if any log key does).
 */
async function firstFrom(table: LogTable, logs: string[], at: number, to: number): Promise<LogMessage | undefined> {
  const found = await Promise.all(
    logs.map(async (log) => {
      const out = await ddb().send(
        new QueryCommand({
          TableName: tableName(table),
          KeyConditionExpression: '#log = :l AND #last BETWEEN :lo AND :hi',
          ExpressionAttributeNames: { '#log': 'log', '#last': 'last' },
          ExpressionAttributeValues: { ':l': log, ':lo': at, ':hi': to - 1 },
          ConsistentRead: true,
          Limit: 1,
        }),
      );
      const chunk = (out.Items ?? [])[0] as ChunkItem | undefined;
      const t = chunk?.m.find((x) => x[0] >= at && x[0] < to);
      return chunk && t ? decodeMessage(t, chunk) : undefined;
    }),
  );
  let best: LogMessage | undefined;
  for (const m of found) if (m && (!best || m.position < best.position)) best = m;
  return best;
}

/** Probes one skip makes at most: 2^40 positions; each probe is one Query per log key. */
const MAX_PROBES = 40;

/**
 * Skips, by position, the messages in [from, to) that `gone` says are trimmed, where `gone` is
 * monotone in position (every message before a trimmed one is trimmed: the size cap by
 * construction, age with a margin, see lambda/logs/rules/retention.ts `SKIP_AGE_MARGIN_MS`). A binary search
 * over the log's chunks: about log2(to - from) probes of one chunk per log key, instead of reading
 * every expired chunk (a consumer behind a million expired messages, a sweeper behind on a busy
 * log). Returns the first position that may hold a message not gone (`to` when none is left).
 */
export async function skipGone(table: LogTable, logs: string[], range: { from: number; to: number }, gone: (m: LogMessage) => boolean): Promise<number> {
  let lo = range.from;
  let hi = range.to;
  let kept: number | undefined;
  // Invariant: every message below `lo` is gone; none lies in [hi, kept), and `kept` is not gone.
  for (let probes = 0; lo < hi && probes < MAX_PROBES; probes++) {
    const mid = probes === 0 ? lo : lo + Math.floor((hi - lo) / 2);
    const m = await firstFrom(table, logs, mid, range.to);
    if (!m) hi = mid;
    else if (gone(m)) lo = m.position + 1;
    else {
      hi = mid;
      kept = m.position;
    }
  }
  return lo < hi ? lo : (kept ?? range.to);
}

/**
 * The chunks of one log key whose last position is at or after `lo`, in position order, page after
 * page until the caller stops iterating.
 */
async function* chunksFrom(table: LogTable, log: string, lo: number): AsyncGenerator<ChunkItem> {
  let start: Record<string, unknown> | undefined;
  do {
    const page: QueryCommandOutput = await ddb().send(
      new QueryCommand({
        TableName: tableName(table),
        KeyConditionExpression: '#log = :l AND #last >= :lo',
        ExpressionAttributeNames: { '#log': 'log', '#last': 'last' },
        ExpressionAttributeValues: { ':l': log, ':lo': lo },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) yield item as ChunkItem;
    start = page.LastEvaluatedKey;
  } while (start);
}

/** Messages and payload bytes stored in one log key at positions in [lo, hi] (reads the chunks). */
export async function storedIn(table: LogTable, log: string, lo: number, hi: number): Promise<{ n: number; b: number }> {
  const total = { n: 0, b: 0 };
  for await (const c of chunksFrom(table, log, lo)) {
    // Chunks come in position order: past the first that starts after `hi`, none holds any.
    if (c.first > hi) break;
    for (const t of c.m) {
      if (t[0] < lo || t[0] > hi) continue;
      total.n++;
      total.b += Buffer.byteLength(t[2], 'utf8');
    }
  }
  return total;
}

/** Deletes up to `limit` chunks of one log key (a deleted log); returns how many. */
export async function purgeChunks(table: LogTable, log: string, limit: number): Promise<number> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: tableName(table),
      KeyConditionExpression: '#log = :l',
      ProjectionExpression: '#log, #last',
      ExpressionAttributeNames: { '#log': 'log', '#last': 'last' },
      ExpressionAttributeValues: { ':l': log },
      Limit: limit,
      // Strongly consistent: an empty page moves the purge past this log key for good, and an
      // eventually consistent Query may miss chunks written within the last second.
      ConsistentRead: true,
    }),
  );
  const keys = (out.Items ?? []) as Record<string, unknown>[];
  if (keys.length) await batchWrite(tableName(table), keys.map((Key) => ({ DeleteRequest: { Key } })));
  return keys.length;
}

/** A message to return, or the position a reader has passed (over messages that are gone). */
export type LiveEvent = { m: LogMessage; passed?: undefined } | { passed: number; m?: undefined };

/**
 * `readMerged` for readers: messages that are gone (past retention or the size cap, judged by
 * `gone.exact`) are not returned but reported as passed; at the first one, the rest of the gone
 * range is skipped by position (`skipGone` with `gone.skip`), so a reader behind many expired
 * messages reads a few chunks of them, not all. The merge's budget (`maxReadBytes`, `deadline`)
 * bounds the rest: the caller answers the position it reached and the next read goes on from it.
 */
export async function* readLive(table: LogTable, logs: string[], o: MergeOptions, gone: { exact(m: LogMessage): boolean; skip(m: LogMessage): boolean }): AsyncGenerator<LiveEvent> {
  let from = o.from;
  let skipped = false;
  for (;;) {
    let restart: number | undefined;
    for await (const m of readMerged(table, logs, { ...o, from })) {
      if (!gone.exact(m)) {
        yield { m };
        continue;
      }
      yield { passed: m.position + 1 };
      // Absent (inside a whole gap, lambda/logs/rules/log-gaps.ts) or within the age margin: the monotone
      // test trims nothing after it, so a skip would cost a probe for nothing.
      if (skipped || !gone.skip(m)) continue;
      skipped = true;
      const to = await skipGone(table, logs, { from: m.position + 1, to: o.to }, gone.skip);
      if (to > m.position + 1) {
        restart = to;
        break;
      }
    }
    if (restart === undefined) return;
    yield { passed: restart };
    from = restart;
  }
}
