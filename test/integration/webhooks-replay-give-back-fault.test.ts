/**
 * Promise (docs/webhooks.md "Replay", docs/design/0022-delivery-log-and-replay.md): a replay the
 * rate limit holds back after taking its POST's claim gives the claim back, so the job back from
 * the queue goes at its next slot instead of waiting out its own claim (SEND_CLAIM_MS, 90 s).
 *
 * Scenario: as in webhooks-replay-held-back.test.ts the process stalls right after the claim's
 * write (the job misses its slot and is put back on the queue), and the give-back's DeleteItem
 * fails once as the code sees it: a throttle (`ProvisionedThroughputExceededException`) that
 * outlasted the SDK's own attempts (3 in standard mode,
 * https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html; the fault is
 * injected above the SDK's retry step), not applied; or the Delete is applied and its answer lost.
 *
 * Observed (failed write): the take retries such failures (`withRetries`, 4 tries), the give-back
 * makes one try and swallows the error (storage `releaseSend`), so that failure leaves the claim
 * held and the job back from the queue meets its own claim: the receiver gets 0 of 1 requests in
 * 20 s (the job waits the claim's 90 s). The lost-answer case holds (the Delete was applied).
 */
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { rateLimitedReplay, withStallAfterClaim } from '../fixtures/replay-stall';
import { injectDynamoFault } from '../fixtures/dynamo-calls';
import { deliverFirst } from '../../lambda/webhooks/deliver';

jest.setTimeout(60_000);

const bed = webhookTestbed('whrgb');

/** Holds the event loop for `ms`, as a stalled process does: no timer fires meanwhile. */

it.each([
  ['fails once (throttled, not applied)', 'before'],
  ['is applied and its answer is lost', 'after'],
] as const)('delivers a held-back replay at its next slot when the give-back of its claim %s', async (_, mode) => {
  const { recv, id, job, onClaim } = await rateLimitedReplay(bed);
  const fault = injectDynamoFault({
    when: (c) => /Delete/.test(c.command) && onClaim(c.input),
    mode,
    name: 'ProvisionedThroughputExceededException',
    fields: { $fault: 'client', $retryable: { throttling: true }, $metadata: { httpStatusCode: 400 } },
  });
  fault.arm();
  const { out: outcome, stalls } = await withStallAfterClaim(onClaim, () => deliverFirst(job));
  try {
    expect(stalls).toBe(1);
    expect(outcome).toBe('waiting');
    expect(fault.hits).toHaveLength(1);
    expect(recv.requests).toHaveLength(0);
    // Back from the queue at its next slot (a second or two): POSTed then, once.
    await recv.waitFor(1, 20_000);
    await new Promise((r) => setTimeout(r, 2000));
    expect(recv.requests.map((r) => JSON.parse(r.body.toString('utf8')).message_id)).toEqual([id]);
  } finally {
    fault.stop();
  }
});
