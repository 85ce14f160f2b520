/**
 * Position reservations of append-only logs (streams and subscriptions), on the log's head
 * (./log-heads.ts): one atomic UpdateItem per publish call reserves a block of positions and bytes
 * and records the block as pending (readers stop before the lowest pending block,
 * domain/log-horizon.ts); a second one clears it once the chunks are written, recording as a gap
 * whatever the publish failed to store. Two writes to the head per publish call, whatever the
 * number of messages: the head's partition key takes about 1,000 writes a second, so a log takes
 * about 500 publish calls a second (each of up to 100 messages).
 */
import { randomBytes } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName } from './client';
import { metaKeys } from './keys';
import { getHead, settleBlock, type LogRef } from './log-heads';
import { pendingToken } from '../domain/log-horizon';
import { isRetryableDependencyFailure, withRetries } from '../domain/dependency-errors';

export interface Reservation {
  /** First position of the block; the block is [start, start + count). */
  start: number;
  count: number;
  /** The log's payload bytes before the block (the first message's `cum`). */
  cum: number;
  token: string;
}

/**
 * Reserves `count` consecutive positions and `bytes` payload bytes; for streams, `lastIndex` (each
 * partition's last message in the block) moves the partition's `lp` to that message's offset.
 * Undefined when the log is gone (deleted, or recreated with another id, since the binding was read).
 *
 * Idempotent under the SDK's retries: the update is conditional on its token not being pending
 * yet, so a retry after a lost answer (the first attempt applied) fails its condition instead of
 * reserving a second block that nothing would ever fill (message_count would count it for good);
 * the block the first attempt reserved is then read back from the head. When the reservation
 * fails otherwise, it is given back at once if it was applied after all (see `abandon`), so
 * readers are not held back until the sweeper settles it.
 */
export async function reserveBlock(ref: LogRef, block: { count: number; bytes: number; lastIndex?: Record<number, number> }, now: number): Promise<Reservation | undefined> {
  const token = pendingToken(now, block, randomBytes(6).toString('hex'));
  const partitions = Object.entries(block.lastIndex ?? {});
  try {
    const out = await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: metaKeys.logHead(ref.namespace, ref.id),
        // Every operand is read before the update: `#next` on the right is the block's start.
        UpdateExpression: ['SET #next = #next + :n', '#nb = #nb + :b', 'pending.#tok = #next', 'pcum.#tok = #nb', ...partitions.map(([p]) => `lp.#p${p} = #next + :i${p}`)].join(', '),
        ConditionExpression: 'attribute_exists(#next) AND attribute_not_exists(deleted_at) AND attribute_not_exists(pending.#tok)',
        ExpressionAttributeNames: { '#next': 'next', '#nb': 'next_bytes', '#tok': token, ...Object.fromEntries(partitions.map(([p]) => [`#p${p}`, p])) },
        ExpressionAttributeValues: { ':n': block.count, ':b': block.bytes, ...Object.fromEntries(partitions.map(([p, i]) => [`:i${p}`, i])) },
        ReturnValues: 'UPDATED_OLD',
      }),
    );
    return { start: out.Attributes?.next as number, count: block.count, cum: out.Attributes?.next_bytes as number, token };
  } catch (e) {
    if (isConditionFailed(e)) return ownReservation(ref, token, block.count);
    await abandon(ref, token, block);
    throw e;
  }
}

/** The block a reservation's earlier, applied attempt made; undefined when the log is gone. */
async function ownReservation(ref: LogRef, token: string, count: number): Promise<Reservation | undefined> {
  const head = await getHead(ref);
  const start = head?.pending?.[token];
  if (!head || start === undefined) return undefined;
  return { start, count, cum: head.pcum?.[token] ?? 0, token };
}

/**
 * Gives back a reservation whose update failed but may have been applied (its answer lost and the
 * SDK's retries failed too): the whole block becomes a gap. Best effort: when the head cannot be
 * read or written either, the sweeper settles it after `PENDING_SETTLE_MS`.
 */
async function abandon(ref: LogRef, token: string, block: { count: number; bytes: number }): Promise<void> {
  try {
    const start = (await getHead(ref))?.pending?.[token];
    if (start !== undefined) await settleBlock(ref, token, { end: start + block.count - 1, gap: { s: start, n: block.count, b: block.bytes } });
  } catch {
    // The sweeper settles it (see above).
  }
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
