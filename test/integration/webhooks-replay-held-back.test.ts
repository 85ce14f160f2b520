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
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { getWebhook } from '../../lambda/storage/webhooks';
import { ddb } from '../../lambda/storage/client';
import { metaKeys } from '../../lambda/storage/keys';
import { deliverFirst } from '../../lambda/webhooks/deliver';
import { replayJob } from '../../lambda/webhooks/replay';
import type { PublishedMessage } from '../../lambda/domain/message';

jest.setTimeout(60_000);

const bed = webhookTestbed('whrhb');

/** Holds the event loop for `ms`, as a stalled process does: no timer fires meanwhile. */
function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy: a stall, not a wait
  }
}

it('delivers a replay held back for the rate after claiming its POST when it comes back, not once the claim lapses', async () => {
  const recv = await bed.receivers.start();
  const hook = await createWebhook(bed.call, { url: recv.url, topic_filter: unique('t'), retry_count: 0, rate_limit: 1 });
  const w = (await getWebhook(bed.ns.name, hook.name))!;
  const id = unique('M');
  const m: PublishedMessage = { message_id: id, topic: 'never/published', payload: `p-${id}`, content_type: 'text/plain', properties: {}, published_at: Date.now(), size: 4 };
  const job = replayJob(w, m, unique('R'));
  const claim = metaKeys.webhookSendClaim(bed.ns.name, w.id, `${id}#REPLAY#${job.replay_id}`);
  // The process stalls once, right after the claim's write answered: the reads before the POST
  // end over half a slot late, and the job does not go in its slot.
  const name = `stall-${unique('m')}`;
  let stalls = 0;
  ddb().middlewareStack.add(
    (next) => async (args) => {
      const out = await next(args);
      const key = (args.input as { Key?: { pk?: string; sk?: string } }).Key;
      if (stalls === 0 && key?.pk === claim.pk && key.sk === claim.sk) {
        stalls++;
        stall(1500);
      }
      return out;
    },
    { step: 'initialize', name },
  );
  let outcome;
  try {
    outcome = await deliverFirst(job);
  } finally {
    ddb().middlewareStack.remove(name);
  }
  expect(stalls).toBe(1);
  expect(outcome).toBe('waiting');
  expect(recv.requests).toHaveLength(0);
  // Back from the queue at its next slot (a second or two): POSTed then, once.
  await recv.waitFor(1, 20_000);
  await new Promise((r) => setTimeout(r, 2000));
  expect(recv.requests.map((r) => JSON.parse(r.body.toString('utf8')).message_id)).toEqual([id]);
});
