/**
 * The long-poll bulkhead (docs/aws-parity.md): a consume that would wait takes
 * a slot first, in its namespace and in the deployment (lambda/queues/storage/long-poll-slots.ts). When
 * either is full it does not wait: it answers at once with what is there, and its response says
 * so in `X-Long-Poll-Shortened` (`namespace`, `total`, or `unavailable` when the slots could not
 * be read). So waiting consumers never take more of the account's Lambda concurrency than
 * config().longPollLimits allows, and publishes and acks keep theirs. The local runtime runs the
 * same code on DynamoDB Local: the same limits.
 *
 * Consume handlers call {@link withLongPollSlot} around their consume, passing the wait it
 * grants; nothing else of theirs changes.
 *
 * A consume first runs without a slot for a short wait (`first.seconds`: a queue's shortest long
 * poll, `timeout_seconds: 0`, about a second; a stream's or subscription's first second), and
 * takes a slot only for the rest of its wait when that came back empty, handing the empty answer
 * to the rest (a stream goes on from its `next_offset`, so a `latest` fixed in the first second is
 * not read again). A consume of a busy queue, stream or subscription pays no slot at all (no
 * write to the namespace's or the pool's slot items); one that waits pays the slot's 4 write
 * units plus one more short read. The time spent unslotted is bounded by one short wait per
 * request, as any consume with `timeout_seconds` of 0 or 1.
 */
import { config } from '../core/config';
import { namespaceSlotShards, WAIT_SHORTENED_HEADER } from './rules/long-poll-limits';
import { releaseSlot, takeSlot, type Slot } from './storage/long-poll-slots';
import { logger } from '../core/observability';
import type { ApiRequest } from '../core/middleware/api-request';

/** Slack after the longest wait before a slot of a dead container frees itself. */
const LEASE_SLACK_MS = 5_000;

/**
 * The slots' period: at least the longest a live container holds a slot. A consume answers
 * within its wait plus settling (lambda/queues/consume.ts: by 26 s), and its function stops at
 * API Gateway's 29 s (lib/constructs/functions.ts): under the longest wait (25 s) plus the slack.
 *
 * Clock skew. Periods are cut from each container's own clock, and a slot stops counting at the
 * roll-over two periods after its own: so the slack, the period less the longest hold (5 s), is
 * the skew between two containers' clocks the limits tolerate; a clock ahead by more may roll an
 * item over while slots of the last period are still held, and more consumes wait than the limit
 * until they end (test/integration/long-poll-slot-clock-ahead.test.ts). Lambda's execution
 * environments synchronise their clocks by NTP
 * (https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars-runtime.html, `TZ`), in AWS
 * the Amazon Time Sync Service (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/set-time.html):
 * milliseconds apart, far within it (docs/design/0006-bounded-consume.md).
 */
export const slotPeriodMs = () => config().maxLongPollSeconds * 1000 + LEASE_SLACK_MS;

/**
 * How much longer than its whole seconds the unslotted first wait may take without costing the
 * rest a second: a 1 s long poll answers a little after 1 s (SQS waits whole seconds), and the
 * consume's own reads come before it. Rounding the rest down instead made a 2 s consume of an
 * empty queue answer after about 1 s.
 */
const FIRST_WAIT_OVERRUN_SECONDS = 0.25;

/** The unslotted first wait of a consume (see the header). */
export interface FirstWait<T> {
  /** The `timeout_seconds` of the unslotted run. */
  seconds: number;
  /** Whether a run's answer is empty (then the rest of the wait takes a slot). */
  isEmpty: (result: T) => boolean;
}

/**
 * Runs `consume` with the wait the bulkhead grants: `timeoutSeconds` when a slot is free (given
 * back when it ends), 0 when not (and the header says why). A consume that asks for no wait
 * takes no slot. With `first`, the first `first.seconds` run unslotted and `consume` gets that
 * run's empty answer (`after`) when it runs again for the rest.
 */
export async function withLongPollSlot<T>(
  req: Pick<ApiRequest, 'namespace' | 'responseHeaders'>,
  timeoutSeconds: number,
  consume: (timeoutSeconds: number, after?: T) => Promise<T>,
  first?: FirstWait<T>,
): Promise<T> {
  if (!(timeoutSeconds > 0)) return consume(timeoutSeconds);
  if (first) {
    if (timeoutSeconds <= first.seconds) return consume(timeoutSeconds);
    const started = Date.now();
    const got = await consume(first.seconds);
    const rest = Math.ceil(timeoutSeconds - (Date.now() - started) / 1000 - FIRST_WAIT_OVERRUN_SECONDS);
    if (!first.isEmpty(got) || rest < 1) return got;
    // Shortened, it answers with the empty answer it has: no second short wait.
    return slotted(req, rest, (t) => consume(t, got), async () => got);
  }
  return slotted(req, timeoutSeconds, consume, () => consume(0));
}

/** Runs `consume` for `timeoutSeconds` in a slot, or `shortened` when none is free. */
async function slotted<T>(
  req: Pick<ApiRequest, 'namespace' | 'responseHeaders'>,
  timeoutSeconds: number,
  consume: (timeoutSeconds: number) => Promise<T>,
  shortened: () => Promise<T>,
): Promise<T> {
  const cfg = config();
  // The consume's rate limit, which the rate-limit middleware has put on the response before any
  // handler runs (DESIGN.md section 10): a limit raised past what one namespace slot item takes
  // splits the namespace's slots over more items.
  const consumeLimit = Number(req.responseHeaders['X-RateLimit-Limit']) || 0;
  const namespaceShards = namespaceSlotShards(consumeLimit, cfg.longPollLimits.perNamespace);
  let slot: Slot | undefined;
  try {
    const r = await takeSlot(req.namespace, { ...cfg.longPollLimits, pool: cfg.longPollPool, shards: cfg.longPollPoolShards, namespaceShards }, slotPeriodMs());
    if (r.taken) slot = r.slot;
    else req.responseHeaders[WAIT_SHORTENED_HEADER] = r.full;
  } catch (e) {
    // Slots that cannot be read are no reason to refuse the consume, nor to let it hold an
    // execution uncounted: it answers with what is there.
    logger.warn('long-poll slots unavailable; answering without waiting', { error: (e as Error).message });
    req.responseHeaders[WAIT_SHORTENED_HEADER] = 'unavailable';
  }
  if (!slot) return shortened();
  try {
    return await consume(timeoutSeconds);
  } finally {
    await releaseSlot(slot).catch((e) => logger.warn('long-poll slot not given back; it frees itself within two periods', { error: (e as Error).message }));
  }
}
