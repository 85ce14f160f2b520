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
import { settleBlock, type LogRef } from './log-heads';
import { pendingToken } from '../domain/log-horizon';

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
        UpdateExpression: ['SET #next = #next + :n', '#nb = #nb + :b', 'pending.#tok = #next', ...partitions.map(([p]) => `lp.#p${p} = #next + :i${p}`)].join(', '),
        ConditionExpression: 'attribute_exists(#next) AND attribute_not_exists(deleted_at)',
        ExpressionAttributeNames: { '#next': 'next', '#nb': 'next_bytes', '#tok': token, ...Object.fromEntries(partitions.map(([p]) => [`#p${p}`, p])) },
        ExpressionAttributeValues: { ':n': block.count, ':b': block.bytes, ...Object.fromEntries(partitions.map(([p, i]) => [`:i${p}`, i])) },
        ReturnValues: 'UPDATED_OLD',
      }),
    );
    return { start: out.Attributes?.next as number, count: block.count, cum: out.Attributes?.next_bytes as number, token };
  } catch (e) {
    if (isConditionFailed(e)) return undefined;
    throw e;
  }
}

/**
 * Clears a reservation after its writes: with `lost` (messages and bytes not stored) above zero the
 * block becomes a gap. A failure here is left to the sweeper, which settles a reservation older
 * than domain/log-horizon.ts `PENDING_SETTLE_MS` by counting what the block's chunks hold: the
 * publish's own answer does not depend on it (its messages are stored, or it fails anyway).
 */
export async function finishBlock(ref: LogRef, r: Reservation, lost: { n: number; b: number }): Promise<void> {
  try {
    await settleBlock(ref, r.token, lost.n > 0 ? { end: r.start + r.count - 1, gap: { s: r.start, n: lost.n, b: lost.b } } : undefined);
  } catch {
    // The sweeper settles it (see above).
  }
}
