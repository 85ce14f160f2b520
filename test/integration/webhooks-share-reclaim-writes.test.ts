/**
 * The write a reclaim of a crashed batch's counts costs (lambda/webhooks/storage/webhook-share.ts
 * `reclaim`), when many batches of the namespace find its lane full at once.
 *
 * Promise (record 0019, "One count per namespace"): "a reclaim is 1 more write per crashed batch's
 * entries, made by one admitter".
 * Scenario: a crashed slow batch fills the slow lane (a share of 20: one slow batch); past the
 * stale age, 100 slow batches of the namespace are admitted at once, as a backlog's batches are.
 * Observed: every admission refused before the first reclaim landed sees the stale entry in its
 * refusal's item and sends a reclaim of its own: 51 and 94 reclaim writes for the 100 admissions
 * here (298 for 300 admissions with both lanes full), all refused but one. A refused conditional write is still billed
 * by the item's size (1 KB units) on AWS
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html),
 * on the namespace's one busiest item, which adds to its throttling (and a throttled reclaim
 * delivers the refused batch uncounted: test/faults/webhook-share-throttled-lane.test.ts).
 */
import { resetConfig } from '../../lambda/core/config';
import { dynamoClient } from '../../lambda/core/storage/client';
import { admit, STALE_AFTER_SECONDS } from '../../lambda/webhooks/share';
import { DELIVERY_BATCH_SIZE } from '../../lambda/webhooks/storage/delivery-queue';
import { unique } from '../fixtures/queues';

jest.setTimeout(60_000);

afterAll(() => {
  delete process.env.MSG_WEBHOOK_NAMESPACE_SHARE;
  resetConfig();
});

it("makes one reclaim write for a crashed batch's entry that 100 admissions at once find", async () => {
  process.env.MSG_WEBHOOK_NAMESPACE_SHARE = String(2 * DELIVERY_BATCH_SIZE);
  resetConfig();
  const ns = unique('rcw');
  const slow = { namespace: ns, lane: 'slow' as const };
  const t0 = Date.now();
  expect((await admit([slow], t0)).take(ns, 'slow')).toBe(true);
  let reclaims = 0;
  const stack = dynamoClient().middlewareStack as unknown as { add: (m: unknown, o: unknown) => void; remove: (n: string) => void };
  stack.add(
    (next: (a: { input: Record<string, unknown> }) => Promise<unknown>) => async (args: { input: Record<string, unknown> }) => {
      if (String(args.input.UpdateExpression ?? '').startsWith('REMOVE') && JSON.stringify(args.input.Key ?? '').includes(ns)) reclaims++;
      return next(args);
    },
    { step: 'initialize', name: 'reclaimCounter' },
  );
  try {
    const later = t0 + (STALE_AFTER_SECONDS + 1) * 1000;
    const batches = await Promise.all(Array.from({ length: 100 }, () => admit([slow], later)));
    expect(batches.filter((b) => b.take(ns, 'slow'))).toHaveLength(1);
    await Promise.all(batches.map((b) => b.release()));
  } finally {
    stack.remove('reclaimCounter');
  }
  expect(reclaims).toBe(1);
});
