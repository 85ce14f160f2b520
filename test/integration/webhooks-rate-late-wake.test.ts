/**
 * A rate-limited job whose wait for its slot ends late (the process stalled: a busy or throttled
 * container, a long garbage collection) does not go in that slot (docs/webhooks.md "Guarantees
 * and limits"): its POST would land beside the next slots' on-time ones. At `rate_limit` 1, jobs
 * whose reads were done when a 2 s stall began all went when it ended, 3 and 4 in one second.
 */
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { gate } from '../../lambda/webhooks/endpoint-limits';
import { lateInSlotMs, noteReadMs } from '../../lambda/webhooks/rate-slot';
import { scaled } from '../fixtures/time-scale';

jest.setTimeout(30_000);

const bed = webhookTestbed('wratelate');

/** Holds the event loop for `ms`, as a stalled process does: no timer fires meanwhile. */
function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy: a stall, not a wait
  }
}

it('a job whose wait for its slot ended over half a slot late does not go in it', async () => {
  const recv = await bed.receivers.start();
  const hook = await createWebhook(bed.call, { url: recv.url, topic_filter: unique('t'), rate_limit: 1 });
  const w = (await getWebhook(bed.ns.name, hook.name))!;
  // A slot 300 ms ahead (at the suite's time scale), carried under the version just read: the job
  // reads before it (its `beforePost`), then waits the rest of the way; the stall begins once its
  // reads are done. The container's read lead, learnt from its recent reads (100 ms before any),
  // is as if they took 250 ms (at the time scale): its reads then begin at once and have the
  // whole of the 300 ms to end before the slot, which loaded cores took more than 100 ms for.
  for (let i = 0; i < 2; i++) noteReadMs(scaled(250));
  const slot = Date.now() + scaled(300);
  let readsDone = 0;
  const g = await gate(w, { at: slot, of: w.updated_at }, async () => {
    readsDone = Date.now();
    setTimeout(() => stall(1500), 0);
    return undefined;
  });
  const answeredAt = Date.now();
  if (g.go) await g.release();
  expect(readsDone).toBeGreaterThan(0);
  expect(readsDone).toBeLessThan(slot);
  // The stall held the wait well past half a slot.
  expect(answeredAt).toBeGreaterThan(slot + lateInSlotMs(1));
  // Going now would put this request beside the next slot's: it is held back for the rate instead.
  expect(g).toMatchObject({ go: false, reason: 'rate_limit' });
});

it('a job whose wait ended in time goes in its slot', async () => {
  const recv = await bed.receivers.start();
  const hook = await createWebhook(bed.call, { url: recv.url, topic_filter: unique('t'), rate_limit: 1 });
  const w = (await getWebhook(bed.ns.name, hook.name))!;
  const slot = Date.now() + 300;
  const g = await gate(w, { at: slot, of: w.updated_at }, async () => undefined);
  expect(g.go).toBe(true);
  expect(Date.now()).toBeGreaterThanOrEqual(slot);
  if (g.go) await g.release();
});
