/**
 * A replay claims its POST at the reads just before it (lambda/webhooks/replay-claim.ts), but the
 * rate limit's gate may still hold the job back after those reads: reads that ended late in the
 * slot, or a wait for the slot that woke late (a stalled process), put it back on the queue for
 * its next slot (lambda/webhooks/endpoint-limits.ts). A claim left held then made the job, back
 * from the queue, meet its own claim and wait for it to lapse (90 s): a re-enable plus bulk replay
 * of a rate-limited webhook on a loaded machine delivered a message over a minute late. The job is
 * run by the delivery function's own code; the receiver is real, and the job held back comes back
 * through the local delivery (event source on the file's queue).
 */
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { rateLimitedReplay, withStallAfterClaim } from '../fixtures/replay-stall';
import { deliverFirst } from '../../lambda/webhooks/deliver';

jest.setTimeout(60_000);

const bed = webhookTestbed('whrhb');

/** Holds the event loop for `ms`, as a stalled process does: no timer fires meanwhile. */

it('delivers a replay held back for the rate after claiming its POST when it comes back, not once the claim lapses', async () => {
  const { recv, id, job, onClaim } = await rateLimitedReplay(bed);
  // The process stalls once, right after the claim's write answered: the reads before the POST
  // end over half a slot late, and the job does not go in its slot.
  const { out: outcome, stalls } = await withStallAfterClaim(onClaim, () => deliverFirst(job));
  expect(stalls).toBe(1);
  expect(outcome).toBe('waiting');
  expect(recv.requests).toHaveLength(0);
  // Back from the queue at its next slot (a second or two): POSTed then, once.
  await recv.waitFor(1, 20_000);
  await new Promise((r) => setTimeout(r, 2000));
  expect(recv.requests.map((r) => JSON.parse(r.body.toString('utf8')).message_id)).toEqual([id]);
});
