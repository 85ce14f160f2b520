/**
 * Position reservations of append-only logs (streams and subscriptions), on the log's head
 * (./log-heads.ts): one atomic UpdateItem per publish call reserves a block of positions and bytes
 * and records the block as pending (readers stop before the lowest pending block,
 * domain/log-horizon.ts); a second one clears it once the chunks are written, recording as a gap
 * whatever the publish failed to store. Two writes to the head per publish call, whatever the
 * number of messages: the head's partition key takes about 1,000 writes a second, so a log takes
 * about 500 publish calls a second (each of up to 100 messages) while its head stays within one
 * write unit (1 KB): each reservation in flight adds its pending entry, about 25 bytes, so about
 * 25 in flight; beyond, each head write costs a unit more per KB.
 */
import { randomBytes } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName } from './client';
import { metaKeys } from './keys';
import { settleBlock } from './log-gaps';
import { getHead, type LogHead, type LogRef } from './log-heads';
import { PUBLISH_LIFETIME_MS, pendingToken, staleTokens, tokenBlock, tokenTime } from '../domain/log-horizon';
import { isRetryableDependencyFailure, withRetries } from '../domain/dependency-errors';
import { serviceUnavailable } from '../domain/errors';

export interface Reservation {
  /** First position of the block; the block is [start, start + count). */
  start: number;
  count: number;
  /** The log's payload bytes before the block (the first message's `cum`). */
  cum: number;
  token: string;
  /** Streams: each touched partition's message count before the block (the head's `lc`). */
  lc?: Record<string, number>;
}

/**
 * How long after its reservation a publish may still start writing its chunks: half its lifetime,
 * so a write (with the SDK's and the batch's retries) lands well before another publish may settle
 * the block as dead (domain/log-horizon.ts `PENDING_SETTLE_MS`).
 */
export const WRITE_WINDOW_MS = PUBLISH_LIFETIME_MS / 2;

/** Whether the publish holding `r` may still write its chunks (see {@link WRITE_WINDOW_MS}). */
export const mayStillWrite = (r: Reservation, now = Date.now()) => now - tokenTime(r.token) < WRITE_WINDOW_MS;

/**
 * Whether another publish or the sweeper may have settled the block already (and readers passed
 * it): its reservation is as old as a publish lives (domain/log-horizon.ts `PUBLISH_LIFETIME_MS`;
 * others settle it from `PENDING_SETTLE_MS`, the margin covers the clocks of two containers). A
 * publish whose clearing ended this late must not answer 201. In AWS it cannot even be running.
 */
export const pastLifetime = (r: Reservation, now = Date.now()) => now - tokenTime(r.token) >= PUBLISH_LIFETIME_MS;

/**
 * The error of a publish whose block passed its write window or its lifetime: 503, retryable. The
 * retry publishes the messages again (at least once), into a new block readers wait for.
 */
export const tooLateError = () => serviceUnavailable(1);

/** Messages and payload bytes a log stores at positions [start, end] (the block of `head`'s reservation). */
export type StoredCounter = (head: LogHead, start: number, end: number) => Promise<{ n: number; b: number }>;

/**
 * Settles the reservation `token` of a dead publish: counts what its block's chunks hold and
 * clears it, recording the rest as a gap, so the derived counts stay exact (domain/retention.ts).
 * Conditional on the reservation still pending (storage/log-gaps.ts `settleBlock`): when several
 * settle one block, or its publish clears it after all, one of them records it.
 */
export async function settleDead(ref: LogRef, head: LogHead, token: string, stored: StoredCounter): Promise<void> {
  const start = head.pending[token];
  const block = tokenBlock(token);
  const end = start + block.count - 1;
  const s = await stored(head, start, end);
  const lost = block.count - s.n;
  await settleBlock(ref, token, lost > 0 ? { end, gap: { s: start, n: lost, b: Math.max(0, block.bytes - s.b) } } : undefined);
}

/**
 * Reservations a log holds in flight at most (each ~25 bytes of the head, its `pending` entry): a log
 * takes ~500 publish calls a second of ~50 ms each, ~25 in flight. Beyond, publishes are stalled
 * or dying faster than they finish (an outage, sustained throttling), and a reservation answers
 * 503 at once instead of growing the head towards DynamoDB's 400 KB item limit.
 */
export const MAX_PENDING = 128;

/** Dead reservations a refused publish settles at most before it tries once more (each counts its block's chunks). */
export const SETTLE_ON_REFUSAL = 8;

/**
 * Reserves `count` consecutive positions and `bytes` payload bytes; for streams, `lastIndex` (each
 * partition's last message in the block) moves the partition's `lp` to that message's offset.
 * Undefined only when the log is gone (deleted, or recreated with another id, since the binding
 * was read): the refusal carries the head as the condition saw it
 * (`ReturnValuesOnConditionCheckFailure: ALL_OLD`, at no read cost; the SDK puts it in the
 * exception's `Item`, https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html),
 * so no second read can find a head that changed meanwhile. A log at its limit of reservations in
 * flight answers 503 (retryable, DESIGN.md section 7), after settling up to
 * {@link SETTLE_ON_REFUSAL} reservations of publishes that are dead (`stored` counts their blocks):
 * a log whose publishes died in a fault takes publishes again as soon as it ends, not when the
 * sweeper comes.
 *
 * Idempotent under the SDK's retries: the update is conditional on its token not being pending
 * yet, so a retry after a lost answer (the first attempt applied) fails its condition instead of
 * reserving a second block that nothing would ever fill (message_count would count it for good);
 * the block the first attempt reserved is in the refusal's head, and is given back as a gap (the
 * publish answers 503, nothing stored: see the refusal below). When the reservation fails
 * otherwise, it is given back at once if it was applied after all (see `abandon`), so readers are
 * not held back until the sweeper settles it.
 */
export async function reserveBlock(
  ref: LogRef,
  block: { count: number; bytes: number; lastIndex?: Record<number, number>; counts?: Record<number, number> },
  stored: StoredCounter,
  settled = false,
): Promise<Reservation | undefined> {
  // The reservation's own clock, not the publish time: readers and the write window judge by it.
  // 48 random bits as 8 base64url characters (12 as hex): the token is the name of the pending
  // entry, the one thing on the head that grows with publishes in flight.
  const token = pendingToken(Date.now(), block, randomBytes(6).toString('base64url'));
  const partitions = Object.entries(block.lastIndex ?? {});
  const counts = Object.entries(block.counts ?? {});
  try {
    const out = await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: metaKeys.logHead(ref.namespace, ref.id),
        // Every operand is read before the update: `#next` on the right is the block's start.
        UpdateExpression: [
          'SET #next = #next + :n',
          '#nb = #nb + :b',
          'pending.#tok = #next',
          ...partitions.map(([p]) => `lp.#p${p} = #next + :i${p}`),
          ...counts.map(([p]) => `lc.#p${p} = if_not_exists(lc.#p${p}, :zero) + :c${p}`),
        ].join(', '),
        ConditionExpression: 'attribute_exists(#next) AND attribute_not_exists(deleted_at) AND attribute_not_exists(pending.#tok) AND size(pending) < :maxPending',
        ExpressionAttributeNames: { '#next': 'next', '#nb': 'next_bytes', '#tok': token, ...Object.fromEntries([...partitions, ...counts].map(([p]) => [`#p${p}`, p])) },
        ExpressionAttributeValues: {
          ':n': block.count,
          ':b': block.bytes,
          ':maxPending': MAX_PENDING,
          ...Object.fromEntries(partitions.map(([p, i]) => [`:i${p}`, i])),
          ...(counts.length ? { ':zero': 0, ...Object.fromEntries(counts.map(([p, c]) => [`:c${p}`, c])) } : {}),
        },
        ReturnValues: 'UPDATED_OLD',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    const lc = counts.length ? { ...Object.fromEntries(counts.map(([p]) => [p, 0])), ...((out.Attributes?.lc as Record<string, number> | undefined) ?? {}) } : undefined;
    return { start: out.Attributes?.next as number, count: block.count, cum: out.Attributes?.next_bytes as number, token, ...(lc ? { lc } : {}) };
  } catch (e) {
    if (!isConditionFailed(e)) {
      await abandon(ref, token, block);
      throw e;
    }
    const head = refusedHead(e);
    // Really gone: no head, or one its delete marked.
    if (!head || head.deleted_at !== undefined) return undefined;
    const start = head.pending?.[token];
    // This publish's own block, reserved by an attempt whose answer was lost (the SDK retried):
    // the log's bytes before it (the messages' `cum`) were in that answer only, so the block is
    // given back whole as a gap, as if the publish had failed, and the publish answers 503
    // (retryable; nothing stored). Keeping every block's `cum` on the head for this rare case
    // would double what each reservation in flight adds to the head, which every publish writes.
    if (start !== undefined) {
      await giveBack(ref, token, start, block);
      throw serviceUnavailable(1);
    }
    // Full (or this publish's earlier block already settled as dead): not stored, retryable.
    if (!settled && (await settleSomeDead(ref, head, stored))) return reserveBlock(ref, block, stored, true);
    throw serviceUnavailable(1);
  }
}

/** Settles up to {@link SETTLE_ON_REFUSAL} dead reservations of `head`, at random (concurrent refusals spread); whether any were found. */
async function settleSomeDead(ref: LogRef, head: LogHead, stored: StoredCounter): Promise<boolean> {
  const dead = staleTokens(head.pending, Date.now());
  if (!dead.length) return false;
  const some = dead.sort(() => Math.random() - 0.5).slice(0, SETTLE_ON_REFUSAL);
  // Best effort: one that fails (or that another settled first) is left to the next refusal or the sweeper.
  await Promise.allSettled(some.map((t) => settleDead(ref, head, t, stored)));
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
 * Gives back a reservation whose update failed but may have been applied (its answer lost and the
 * SDK's retries failed too): the whole block becomes a gap. The head is read and the block given
 * back over about 3 s beyond the SDK's retries, as a clearing is (`finishBlock`): until then every
 * reader of the log stops before the block. Best effort: when the head cannot be read or written
 * for that long, the sweeper settles it after `PENDING_SETTLE_MS`.
 */
async function abandon(ref: LogRef, token: string, block: { count: number; bytes: number }): Promise<void> {
  await withRetries(async () => {
    const start = (await getHead(ref))?.pending?.[token];
    if (start !== undefined) await settleBlock(ref, token, { end: start + block.count - 1, gap: { s: start, n: block.count, b: block.bytes } });
  }, SETTLE_RETRIES).catch(() => undefined);
}

/**
 * Clears reservation `token` (its block at `start`) with the whole block as a gap: nothing of it
 * is stored. Tried as a clearing is (see `abandon`); when the head cannot be written, the sweeper,
 * or a publish refused at the limit, settles it after `PENDING_SETTLE_MS` by counting what the
 * block's chunks hold (none).
 */
async function giveBack(ref: LogRef, token: string, start: number, block: { count: number; bytes: number }): Promise<void> {
  await withRetries(() => settleBlock(ref, token, { end: start + block.count - 1, gap: { s: start, n: block.count, b: block.bytes } }), SETTLE_RETRIES).catch(() => false);
}

/** Calls of a reservation's clearing, the first retry after 100 ms, doubling: about 3 s in all. */
const SETTLE_RETRIES = { tries: 6, firstDelayMs: 100, retryIf: isRetryableDependencyFailure };

/**
 * Clears a reservation after its writes: with `lost` (messages and bytes not stored) above zero the
 * block becomes a gap, after `recount` (the failed chunks read back) has said what is really
 * missing. Tried again (over about 3 s, the length of a short storage outage) beyond the SDK's own
 * retries: until it is cleared, every reader of the log stops before the block. Returns what the
 * block lost, or undefined when the reservation could not be cleared: that is left to the
 * sweeper, which settles a reservation older than domain/log-horizon.ts `PENDING_SETTLE_MS` by
 * counting what the block's chunks hold.
 */
export async function finishBlock(ref: LogRef, r: Reservation, lost: { n: number; b: number }, recount?: () => Promise<{ n: number; b: number }>): Promise<{ n: number; b: number } | undefined> {
  let known = lost.n > 0 && recount ? undefined : lost;
  try {
    return await withRetries(async () => {
      known ??= await recount!();
      // False when already cleared: by this publish's earlier attempt whose answer was lost.
      await settleBlock(ref, r.token, known.n > 0 ? { end: r.start + r.count - 1, gap: { s: r.start, n: known.n, b: known.b } } : undefined);
      return known;
    }, SETTLE_RETRIES);
  } catch {
    return undefined;
  }
}
