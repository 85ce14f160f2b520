/**
 * A replay (extension) claims its POST before making it. SQS standard queues deliver a message at
 * least once, so two invocations may receive copies of one replay job at the same moment
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/standard-queues-at-least-once-delivery.html),
 * and a bulk replay sent again after a lost answer queues a second job of the same replay (its id
 * is derived from the failure it replays, ./replay.ts). Both read no record; without a claim both
 * POST, and the receiver gets a message it was asked to take again twice.
 *
 * The claim (storage/webhook-deliveries.ts `claimSend`, 1 write unit per replay) lasts longer than
 * an invocation can: Lambda stops one at the function's timeout, so once the claim lapsed its
 * holder has recorded how the delivery ended, or never will. The run that took the claim reads
 * the record again before its POST; a copy that meets a claim held waits on the queue until it
 * lapses (a new message, delayed: not a receive) and then carries on from the record, or takes the
 * claim over from a holder that died. First deliveries take no claim: docs/design/0017-webhook-delivery-once.md says why.
 */
import { randomUUID } from 'node:crypto';
import { DELIVERY_TIMEOUT_SECONDS, deferJobs } from './storage/delivery-queue';
import type { DeliveryJob } from './rules/delivery';
import { isRetryableDependencyFailure, withRetries } from '../core/rules/dependency-errors';
import { sqsJson } from '../core/rules/queue-messages';
import { claimSend, readDelivery, releaseSend, type DeliveryRecord } from './storage/webhook-deliveries';
import { keyOf, withSlot } from './delivery-key';

/** The function's timeout and a margin for clocks that disagree. */
const SEND_CLAIM_MS = (DELIVERY_TIMEOUT_SECONDS + 30) * 1000;

/** SQS's largest DelaySeconds. */
const MAX_DELAY_SECONDS = 900;

const CLAIM_RETRIES = { tries: 4, firstDelayMs: 100, retryIf: isRetryableDependencyFailure };

/**
 * The claim on the POST of a replay job. `take` claims it: undefined when this run may POST, the
 * record when another run recorded how the delivery went (carry on from it), or when another copy
 * holds the POST. `giveBack` gives a claim taken back when no POST follows after all: the rate
 * limit's gate may hold the job back after its reads before the POST (./endpoint-limits.ts), and
 * the job back from the queue would otherwise meet its own claim and wait for it to lapse.
 */
export function replayPostClaim(job: DeliveryJob) {
  const claimId = randomUUID();
  let held = false;
  const giveBack = async () => {
    if (!held) return;
    held = false;
    // Tried as the take is: a claim left held makes the job back from the queue wait for it to
    // lapse (90 s). One still failing after its tries lapses all the same.
    await withRetries(() => releaseSend(keyOf(job), claimId), CLAIM_RETRIES).catch(() => undefined);
  };
  const take = async (): Promise<DeliveryRecord | { heldUntil: number } | undefined> => {
    const now = Date.now();
    // Held from the first try on: a write that failed may have been applied all the same.
    held = true;
    const c = await withRetries(() => claimSend(keyOf(job), claimId, now, now + SEND_CLAIM_MS), CLAIM_RETRIES);
    held = c.mine;
    if (!c.mine) return { heldUntil: c.heldUntil };
    // A claim taken over from a lapsed one: its holder may have POSTed and recorded the end.
    try {
      return (await withRetries(() => readDelivery(keyOf(job)), CLAIM_RETRIES)) ?? undefined;
    } catch (e) {
      // No POST: given back, so the job SQS hands out again does not wait for it to lapse.
      await giveBack();
      throw e;
    }
  };
  return { take, giveBack };
}

/** Puts a copy that met another's claim back on the queue until the claim lapses. */
export async function waitForClaim(job: DeliveryJob, heldUntil: number): Promise<void> {
  const seconds = Math.min(MAX_DELAY_SECONDS, Math.max(1, Math.ceil((heldUntil - Date.now()) / 1000)));
  await deferJobs([sqsJson(withSlot(job, undefined))], seconds);
}
