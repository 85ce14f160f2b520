/**
 * Position reservations of append-only logs (streams and subscriptions), on the log's head
 * (./log-heads.ts): one atomic UpdateItem per publish call reserves a block of positions and bytes
 * and the next reservation number; once the chunks are written, the publish writes its reservation
 * record (./log-records.ts, another key), recording its whole block as a gap when it failed to
 * store any of it (lambda/logs/rules/log-gaps.ts: readers then pass every position of the block). Readers
 * stop before the first reservation without a record (lambda/logs/rules/log-records.ts). One write to the
 * head per publish call, whatever the number of messages or of calls in flight (nothing on the
 * head grows with them), so the head's key, at about 1,000 write units a second, takes about
 * 1,000 publish calls a second, as does the records key.
 */
import { randomBytes } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { CONFLICT_TRIES, conflictBackoffMs, ddb, isConditionFailed, tableName } from '../../core/storage/client';
import { metaKeys } from '../../core/storage/keys';
import { settleBlock, spillGaps } from './log-gaps';
import { getHead, getHeadForPurge, type LogHead, type LogRef } from './log-heads';
import { advanceWatermark, claimRun, readRecord, runRecord, WATERMARK_EVERY, writeRecord, type RecordInput } from './log-records';
import { runToken, tokenRun, type RecordMarks } from '../rules/log-records';
import { HEAD_MAX_GAPS, type Gap } from '../rules/retention';
import { PUBLISH_LIFETIME_MS, pendingToken, staleTokens, tokenBlock, tokenTime } from '../rules/log-horizon';
import { wholeGap } from '../rules/log-gaps';
import { isRetryableDependencyFailure, withRetries } from '../../core/rules/dependency-errors';
import { serviceUnavailable } from '../../core/rules/errors';

export interface Reservation {
  /** First position of the block; the block is [start, start + count). */
  start: number;
  count: number;
  /** The log's payload bytes before the block (the first message's `cum`). */
  cum: number;
  token: string;
  /** The block's payload bytes. */
  bytes: number;
  /** The reservation's number (lambda/logs/rules/log-records.ts). */
  seq: number;
  /** The head's watermark as the reservation found it (for moving it, ./log-records.ts `advanceWatermark`). */
  marks: RecordMarks;
  /** The head as the reservation found it. */
  head: LogHead;
  /** Streams: each touched partition's message count before the block (the head's `lc`). */
  lc?: Record<string, number>;
}

/**
 * How long after its reservation a publish may still start writing its chunks: half its lifetime,
 * so a write (with the SDK's and the batch's retries) lands well before another publish may settle
 * the block as dead (lambda/logs/rules/log-horizon.ts `PENDING_SETTLE_MS`).
 */
const WRITE_WINDOW_MS = PUBLISH_LIFETIME_MS / 2;

/** Whether the publish holding `r` may still write its chunks (see {@link WRITE_WINDOW_MS}). */
export const mayStillWrite = (r: Reservation, now = Date.now()) => now - tokenTime(r.token) < WRITE_WINDOW_MS;

/**
 * The error of a publish whose block passed its write window or its lifetime: 503, retryable. The
 * retry publishes the messages again (at least once), into a new block readers wait for.
 */
export const tooLateError = () => serviceUnavailable(1);

/**
 * Settles the reservation `token` of a dead publish: records its whole block as a gap, so the
 * derived counts stay exact (lambda/logs/rules/retention.ts) and readers pass its positions whatever its
 * chunks hold or come to hold (lambda/logs/rules/log-gaps.ts: a chunk put sent in time may land after the
 * settle; its publish never answered 201). Nothing is read. Conditional on the reservation still
 * pending (lambda/logs/storage/log-gaps.ts `settleBlock`, or the record key of its number): when several
 * settle one block, or its publish records it after all, one of them records it.
 */
export async function settleDead(ref: LogRef, head: LogHead, token: string): Promise<void> {
  const start = head.pending[token];
  const block = tokenBlock(token);
  const gap = block.count > 0 ? wholeGap(start, block) : undefined;
  const run = tokenRun(token);
  if (!run) await settleBlock(ref, token, gap);
  // A run of reservations without a record: its other numbers claimed, one record settles them all.
  else if (await claimRun(ref, run, token)) await recordBlock(ref, runRecord(run, token, start, block), gap);
}

/** Rounds of settling a reader makes at most before it stops at what is still unsettled. */
const READER_SETTLE_ROUNDS = 3;

/**
 * The head as a reader must see it: every dead block below its `next` settled (`settleDead`, the
 * same claims and whole gap a watermark move or the sweeper makes). A reader never passes a block
 * without a record that is not settled: until the settle, the block's chunk may be read (its
 * publish died after it landed), after it the block is a whole gap that every reader passes, and
 * its publish answers 503 (its record put is refused by the settle's claim). Rare: a write in a
 * read only when a dead block is met. Settled lowest first, {@link SETTLE_ON_REFUSAL} at once (each
 * may spill the head's gaps, which concurrent settles would contend for), while a round settles
 * something. A block whose settle fails (its own record landed first, or storage errors) stays in
 * `pending`, and the caller stops before it (lambda/logs/rules/log-horizon.ts `lowestPending`); the next read
 * settles it. `abortSignal` (a consume's answer deadline) ends its reads of the head, the SDK's
 * retries included (./log-heads.ts `getHead`).
 */
export async function settledForReaders(ref: LogRef, head: LogHead, now = Date.now(), abortSignal?: AbortSignal): Promise<LogHead> {
  let before = Infinity;
  for (let round = 0; round < READER_SETTLE_ROUNDS; round++) {
    const dead = staleTokens(head.pending, now).sort((a, b) => head.pending[a] - head.pending[b]);
    if (!dead.length || dead.length >= before) return head;
    before = dead.length;
    for (let i = 0; i < dead.length; i += SETTLE_ON_REFUSAL) {
      await Promise.allSettled(dead.slice(i, i + SETTLE_ON_REFUSAL).map((t) => settleDead(ref, head, t)));
    }
    const again = await getHead(ref, abortSignal);
    if (!again) return head;
    head = again;
  }
  return head;
}

/**
 * Reservations a log's head holds in its own `pending` map at most: only reservations made before
 * 2026-11-29 are there (each ~25 bytes), and a log full of them answers 503 until they settle.
 * Reservations made since are records of their own (./log-records.ts), which nothing limits: a
 * publish in flight adds nothing to the head.
 */
export const MAX_PENDING = 128;

/** Dead reservations a refused publish settles at most before it tries once more. */
const SETTLE_ON_REFUSAL = 8;

/**
 * Reserves `count` consecutive positions and `bytes` payload bytes, and the next reservation
 * number; for streams, `lastIndex` (each partition's last message in the block) moves the
 * partition's `lp` to that message's offset. Undefined only when the log is gone (deleted, or
 * recreated with another id, since the binding was read): the refusal carries the head as the
 * condition saw it (`ReturnValuesOnConditionCheckFailure: ALL_OLD`, at no read cost; the SDK puts
 * it in the exception's `Item`,
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html), so no
 * second read can find a head that changed meanwhile.
 *
 * Idempotent under the SDK's retries as far as the head can tell: the update stores its token as
 * the head's last one (`lt`) and is conditional on it not being so already, so a retry after a
 * lost answer, with no other reservation in between, fails its condition instead of reserving a
 * second block. The block the first attempt reserved is then the head's last one, [next - count,
 * next): the publish gives it back whole as a gap and answers 503 (retryable; nothing stored), as
 * a failed write would. When another reservation came in between,
 * the retry reserves a second block and the first is never recorded: readers wait for it until
 * its settle time, then pass it, and the sweeper settles it as a dead publish's (its whole block
 * a gap), so the counts stay exact. When the reservation fails otherwise, it is given
 * back at once if the head shows it applied (see `abandon`).
 */
export async function reserveBlock(
  ref: LogRef,
  block: { count: number; bytes: number; lastIndex?: Record<number, number>; counts?: Record<number, number> },
  settled = false,
): Promise<Reservation | undefined> {
  // The reservation's own clock, not the publish time: readers and the write window judge by it.
  const token = pendingToken(Date.now(), block, randomBytes(6).toString('base64url'));
  const partitions = Object.entries(block.lastIndex ?? {});
  const counts = Object.entries(block.counts ?? {});
  try {
    const out = await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: metaKeys.logHead(ref.namespace, ref.id),
        // Every operand is read before the update: `#next` on the right is the block's start. A
        // head made before reservation records starts its numbering (and watermark) here.
        UpdateExpression: [
          'SET #next = #next + :n',
          '#nb = #nb + :b',
          'seq = if_not_exists(seq, :zero) + :one',
          'w = if_not_exists(w, :zero)',
          'ws = if_not_exists(ws, #next)',
          'wc = if_not_exists(wc, #nb)',
          'lt = :tok',
          ...partitions.map(([p]) => `lp.#p${p} = #next + :i${p}`),
          ...counts.map(([p]) => `lc.#p${p} = if_not_exists(lc.#p${p}, :zero) + :c${p}`),
        ].join(', '),
        ConditionExpression: 'attribute_exists(#next) AND attribute_not_exists(deleted_at) AND (attribute_not_exists(lt) OR lt <> :tok) AND size(pending) < :maxPending',
        ExpressionAttributeNames: { '#next': 'next', '#nb': 'next_bytes', ...Object.fromEntries([...partitions, ...counts].map(([p]) => [`#p${p}`, p])) },
        ExpressionAttributeValues: {
          ':n': block.count,
          ':b': block.bytes,
          ':zero': 0,
          ':one': 1,
          ':tok': token,
          ':maxPending': MAX_PENDING,
          ...Object.fromEntries(partitions.map(([p, i]) => [`:i${p}`, i])),
          ...Object.fromEntries(counts.map(([p, c]) => [`:c${p}`, c])),
        },
        ReturnValues: 'ALL_OLD',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    const old = (out.Attributes ?? {}) as Partial<LogHead>;
    const lc = counts.length ? { ...Object.fromEntries(counts.map(([p]) => [p, 0])), ...(old.lc ?? {}) } : undefined;
    const start = old.next as number;
    const cum = old.next_bytes as number;
    const marks: RecordMarks = { next: start, next_bytes: cum, seq: old.seq ?? 0, w: old.w ?? 0, ws: old.ws ?? start, wc: old.wc ?? cum, ...(old.lt ? { lt: old.lt } : {}) };
    return { start, count: block.count, cum, token, bytes: block.bytes, seq: old.seq ?? 0, marks, head: old as LogHead, ...(lc ? { lc } : {}) };
  } catch (e) {
    if (!isConditionFailed(e)) {
      await abandon(ref, token);
      throw e;
    }
    const head = refusedHead(e);
    // Really gone: no head, or one its delete marked.
    if (!head || head.deleted_at !== undefined) return undefined;
    // This publish's own block, reserved by an attempt whose answer was lost (the SDK retried):
    // given back whole as a gap, as if the publish had failed; 503 (retryable; nothing stored).
    if (head.lt === token) {
      await giveBack(ref, ownLastBlock(head, token));
      throw serviceUnavailable(1);
    }
    // Full of reservations made before 2026-11-29: not stored, retryable.
    if (!settled && (await settleSomeDead(ref, head))) return reserveBlock(ref, block, true);
    throw serviceUnavailable(1);
  }
}

/** The record of a head's last reservation, `token` (its `lt`), with its whole block as a gap. */
function ownLastBlock(head: LogHead, token: string): { record: RecordInput; lost: { end: number; gap: Gap } } {
  const { count, bytes } = tokenBlock(token);
  const start = head.next - count;
  return { record: { seq: (head.seq ?? 1) - 1, s: start, n: count, b: bytes, c: head.next_bytes - bytes, tok: token }, lost: { end: head.next - 1, gap: { s: start, n: count, b: bytes } } };
}

async function settleSomeDead(ref: LogRef, head: LogHead): Promise<boolean> {
  const dead = staleTokens(head.pending, Date.now());
  if (!dead.length) return false;
  const some = dead.sort(() => Math.random() - 0.5).slice(0, SETTLE_ON_REFUSAL);
  // Best effort: one that fails (or that another settled first) is left to the next refusal or the sweeper.
  await Promise.allSettled(some.map((t) => settleDead(ref, head, t)));
  return true;
}

/**
 * The head a refused reservation's condition saw (the exception's `Item`): in DynamoDB's
 * attribute-value form, as the document client does not unmarshall errors. Undefined when there
 * was no item.
 */
function refusedHead(e: unknown): LogHead | undefined {
  const item = (e as { Item?: Record<string, unknown> }).Item;
  return item ? (plain({ M: item }) as LogHead) : undefined;
}

/** A value in DynamoDB's attribute-value form as a plain one (the types a head holds). */
function plain(av: unknown): unknown {
  const v = av as { S?: string; N?: string; BOOL?: boolean; NULL?: boolean; M?: Record<string, unknown>; L?: unknown[] };
  if (v.S !== undefined) return v.S;
  if (v.N !== undefined) return Number(v.N);
  if (v.BOOL !== undefined) return v.BOOL;
  if (v.M !== undefined) return Object.fromEntries(Object.entries(v.M).map(([k, x]) => [k, plain(x)]));
  if (v.L !== undefined) return v.L.map(plain);
  return null;
}

/**
 * Writes a block's record (./log-records.ts `writeRecord`) with its gap; when the head refuses the
 * gap, a deleted log's block is recorded without one (it keeps no counts) and a head whose gaps
 * are full spills them to a page (./log-gaps.ts) before the next try. True when written, false
 * when the reservation already had another's record (it was settled as dead).
 */
async function recordBlock(ref: LogRef, record: RecordInput, lost?: { end: number; gap: Gap }): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    const outcome = await writeRecord(ref, record, lost);
    if (outcome !== 'head-refused') return outcome === 'written';
    const head = await getHeadForPurge(ref);
    if (!head || head.deleted_at !== undefined) return (await writeRecord(ref, record)) === 'written';
    if (attempt >= CONFLICT_TRIES) throw new Error(`could not record the gap of reservation ${record.tok} of log ${ref.id}; the sweeper settles it after the settle time`);
    if (Object.keys(head.gaps ?? {}).length >= HEAD_MAX_GAPS) await spillGaps(ref, head);
    await new Promise((r) => setTimeout(r, conflictBackoffMs(attempt)));
  }
}

/**
 * Gives back a reservation whose update failed but may have been applied (its answer lost and the
 * SDK's retries failed too): when the head's last reservation is this one, its whole block becomes
 * a gap. The head is read and the block given back over about 3 s beyond the SDK's retries, as a
 * record is written (`finishBlock`): until then every reader of the log stops before the block.
 * Best effort: when the head cannot be read or written for that long, or another reservation
 * came after it, the sweeper settles it after `PENDING_SETTLE_MS`.
 */
async function abandon(ref: LogRef, token: string): Promise<void> {
  await withRetries(async () => {
    const head = await getHeadForPurge(ref);
    if (head?.lt !== token || head.deleted_at !== undefined) return;
    const own = ownLastBlock(head, token);
    await recordBlock(ref, own.record, own.lost);
  }, SETTLE_RETRIES).catch(() => undefined);
}

/** Records a block of this publish's whole as a gap: nothing of it is stored. Tried as a record is (see `abandon`). */
async function giveBack(ref: LogRef, own: { record: RecordInput; lost: { end: number; gap: Gap } }): Promise<void> {
  await withRetries(() => recordBlock(ref, own.record, own.lost), SETTLE_RETRIES).catch(() => false);
}

/** Calls of a reservation's record, the first retry after 100 ms, doubling: about 3 s in all. */
const SETTLE_RETRIES = { tries: 6, firstDelayMs: 100, retryIf: isRetryableDependencyFailure };

/**
 * Records a reservation after its writes: with `lost` (messages and bytes not stored) above zero,
 * once `recount` (the failed chunks read back) has confirmed something is really missing, the
 * block's record carries its whole block as a gap. Tried again (over about 3 s, the length of a short storage outage) beyond the
 * SDK's own retries: until it is recorded, every reader of the log stops before the block. Returns
 * what the block lost; throws the too-late 503 when the reservation's number already has
 * another's record or claim (settled as dead: its whole block a gap).
 *
 * A record written is the truth whenever it lands: a settle writes the same record key (or claims
 * it) conditional on it holding no record (./log-records.ts `writeRecord`, `claimRun`), so "this
 * record landed" and "the block was settled as a gap" exclude each other, and readers never pass a
 * block without a record unless it was settled (`settledForReaders`). A publish whose record
 * landed late (after its lifetime) is therefore read, and answers 201.
 *
 * When every try ended without an answer (the put may have been applied), the outcome is settled
 * before answering (`settleUnknown`). Undefined only when storage stayed unreachable for that
 * too: the publish answers 503 though its block may be complete and read. Every
 * {@link WATERMARK_EVERY}th reservation then moves the head's watermark over the records complete
 * below it.
 */
export async function finishBlock(ref: LogRef, r: Reservation, lost: { n: number; b: number }, recount?: () => Promise<{ n: number; b: number }>): Promise<{ n: number; b: number } | undefined> {
  let known = lost.n > 0 && recount ? undefined : lost;
  let done: { n: number; b: number } | undefined;
  let recorded = true;
  try {
    done = await withRetries(async () => {
      known ??= await recount!();
      // Any message lost makes the whole block a gap (lambda/logs/rules/log-gaps.ts): readers pass what it
      // stored too, so the publish's 503 leaves nothing its retry would duplicate.
      recorded = await recordBlock(ref, { seq: r.seq, s: r.start, n: r.count, b: r.bytes, c: r.cum, tok: r.token }, known.n > 0 ? wholeGap(r.start, r) : undefined);
      return known;
    }, SETTLE_RETRIES);
  } catch {
    const outcome = await settleUnknown(ref, r);
    if (outcome === 'gap') throw tooLateError();
    if (outcome === undefined) return undefined;
    done = { n: 0, b: 0 };
  }
  // Another recorded it first (settled as dead: its whole block a gap, which readers pass
  // whatever its chunks hold), so not a 201, whatever this publish's clock says.
  if (!recorded) throw tooLateError();
  if ((r.seq + 1) % WATERMARK_EVERY === 0) await moveWatermark(ref, r);
  return done;
}

/**
 * The outcome of a block whose record put may have been applied with every answer lost: a strongly
 * consistent read of its record key; this publish's record without a gap there means the block is
 * complete (readers read it: 'complete'); another's record or a claim, or this publish's with a
 * gap, means it is a gap ('gap'). No record yet: the block is claimed as a whole gap by the
 * conditional record write a settle makes (refused if the record is there), and the key read
 * again. Tried over about 3 s; undefined when storage stayed unreachable.
 */
async function settleUnknown(ref: LogRef, r: Reservation): Promise<'complete' | 'gap' | undefined> {
  const judge = (rec: Awaited<ReturnType<typeof readRecord>>) => (!rec ? undefined : rec.tok === r.token && rec.claim === undefined && rec.g === undefined ? 'complete' : 'gap');
  try {
    return await withRetries(async () => {
      const seen = judge(await readRecord(ref, r.seq));
      if (seen) return seen;
      await recordBlock(ref, { seq: r.seq, s: r.start, n: r.count, b: r.bytes, c: r.cum, tok: r.token }, wholeGap(r.start, r));
      const now = judge(await readRecord(ref, r.seq));
      if (!now) throw new Error(`the record of reservation ${r.token} of log ${ref.id} is not there after its write`);
      return now;
    }, { ...SETTLE_RETRIES, retryIf: () => true });
  } catch {
    return undefined;
  }
}

/**
 * Moves the watermark (./log-records.ts `advanceWatermark`) and settles the run of dead
 * reservations it stops at, if any: a log's publishes settle what died before them, so readers
 * and the watermark go on without waiting for the sweeper. Best effort, as the sweeper settles too.
 */
async function moveWatermark(ref: LogRef, r: Reservation): Promise<void> {
  try {
    const { dead, marks } = await advanceWatermark(ref, r.marks, r.seq);
    if (!dead) return;
    const token = runToken(dead);
    await settleDead(ref, { ...r.head, pending: { [token]: dead.s } }, token);
    // Settled: the watermark goes on past it.
    await advanceWatermark(ref, marks, r.seq);
  } catch {
    // Left to the next move or the sweeper.
  }
}
