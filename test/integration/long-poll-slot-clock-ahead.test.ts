/**
 * Long-poll slots (lambda/queues/storage/long-poll-slots.ts) taken by a container whose clock is a
 * period ahead of the others'. Lambda environments keep their own clocks; the slots' periods are cut
 * from each container's `Date.now()`. A slot is dropped by the roll-over two periods after the period
 * it counts in, which is safe only while every clock is within the period's slack of the others
 * (bulkhead.ts: the period is the longest wait plus 5 s): a take from a clock a period ahead rolls
 * the item over while the slots of the last period are still held, so they stop counting and more
 * consumes wait than the namespace's limit (docs/aws-parity.md, long-poll bulkhead). The record
 * (docs/design/0006-bounded-consume.md) states no bound on the skew it tolerates.
 */
import { randomUUID } from 'node:crypto';
import { takeSlot, type SlotLimits } from '../../lambda/queues/storage/long-poll-slots';

jest.setTimeout(60_000);

const PERIOD_MS = 30_000;

it('a take from a clock a period ahead does not let more consumes wait than the limit', async () => {
  const ns = `cka-${randomUUID().slice(0, 8)}`;
  const limits: SlotLimits = { perNamespace: 2, total: 1000, pool: `ahead-${randomUUID()}`, shards: 1 };
  const g = Math.floor(Date.now() / PERIOD_MS) + 60;
  // Two consumes take the namespace's slots a second before period g ends: they wait up to 25 s,
  // into period g + 1.
  const held = [await takeSlot(ns, limits, PERIOD_MS, (g + 1) * PERIOD_MS - 1000), await takeSlot(ns, limits, PERIOD_MS, (g + 1) * PERIOD_MS - 999)];
  expect(held.map((r) => r.taken)).toEqual([true, true]);
  // Five seconds into period g + 1 (both still wait), a container whose clock is a period ahead
  // takes, then containers of the right clock.
  const ahead = await takeSlot(ns, limits, PERIOD_MS, (g + 2) * PERIOD_MS + 5000);
  const onTime = await takeSlot(ns, limits, PERIOD_MS, (g + 1) * PERIOD_MS + 5001);
  const waiting = [...held, ahead, onTime].filter((r) => r.taken).length;
  expect(waiting).toBeLessThanOrEqual(limits.perNamespace);
});
