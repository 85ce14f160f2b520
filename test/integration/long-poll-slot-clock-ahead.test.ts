/**
 * Long-poll slots (lambda/queues/storage/long-poll-slots.ts) taken by a container whose clock is
 * ahead of the others'. Lambda environments keep their own clocks; the slots' periods are cut from
 * each container's `Date.now()`. A slot is dropped by the roll-over two periods after the period it
 * counts in, which is safe while every clock is within the period less the longest hold of the
 * others (the period is the longest wait plus 5 s: lambda/queues/bulkhead.ts, so 5 s): a take from
 * a clock ahead by less than that finds the last period's live slots counted, however late in
 * their hold it comes. Beyond it the count may drop (a clock a whole period ahead rolls the item
 * over while the last period's slots are still held, and more consumes wait than the limit): a
 * property of the period design, bounded in docs/design/0006-bounded-consume.md, where the clocks'
 * synchronisation in Lambda keeps skews far within it.
 */
import { randomUUID } from 'node:crypto';
import { takeSlot, type SlotLimits } from '../../lambda/queues/storage/long-poll-slots';

jest.setTimeout(60_000);

/** The longest a live container holds a slot (the longest wait), and the period it sets. */
const LONGEST_HOLD_MS = 25_000;
const PERIOD_MS = LONGEST_HOLD_MS + 5_000;
/** The skew the design tolerates: the period less the longest hold. */
const TOLERATED_SKEW_MS = PERIOD_MS - LONGEST_HOLD_MS;

it.each([1_000, 4_000, TOLERATED_SKEW_MS])('a take from a clock %i ms ahead, at the last moment the slots of the last period are held, lets no more consumes wait than the limit', async (aheadMs) => {
  const ns = `cka-${randomUUID().slice(0, 8)}`;
  const limits: SlotLimits = { perNamespace: 2, total: 1000, pool: `ahead-${randomUUID()}`, shards: 1 };
  const g = Math.floor(Date.now() / PERIOD_MS) + 60;
  // Two consumes take the namespace's slots in the last millisecond of period g, by clocks that
  // are right: they hold them for the longest hold, into period g + 1.
  const takenAt = (g + 1) * PERIOD_MS - 1;
  const held = [await takeSlot(ns, limits, PERIOD_MS, takenAt), await takeSlot(ns, limits, PERIOD_MS, takenAt)];
  expect(held.map((r) => r.taken)).toEqual([true, true]);
  // The last millisecond both still wait, a container whose clock is ahead takes, then one whose
  // clock is right.
  const last = takenAt + LONGEST_HOLD_MS - 1;
  const ahead = await takeSlot(ns, limits, PERIOD_MS, last + aheadMs);
  const onTime = await takeSlot(ns, limits, PERIOD_MS, last + 1);
  const waiting = [...held, ahead, onTime].filter((r) => r.taken).length;
  expect(waiting).toBeLessThanOrEqual(limits.perNamespace);
});
