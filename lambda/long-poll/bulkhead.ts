/**
 * The long-poll bulkhead (issue 25 item 6, docs/aws-parity.md): a consume that would wait takes
 * a slot first, in its namespace and in the deployment (lambda/storage/long-poll-slots.ts). When
 * either is full it does not wait: it answers at once with what is there, and its response says
 * so in `X-Long-Poll-Shortened` (`namespace`, `total`, or `unavailable` when the slots could not
 * be read). So waiting consumers never take more of the account's Lambda concurrency than
 * config().longPollLimits allows, and publishes and acks keep theirs. The local runtime runs the
 * same code on DynamoDB Local: the same limits.
 *
 * Consume handlers call {@link withLongPollSlot} around their consume, passing the wait it
 * grants; nothing else of theirs changes.
 *
 * A consume that can tell an empty answer (`isEmpty`, queue consumes) first runs without a slot
 * with the shortest long poll (`timeout_seconds: 0`, at most about a second of waiting), and takes
 * a slot only for the rest of its wait when that came back empty: a consume of a busy queue pays
 * no slot at all (no write to the namespace's or the pool's slot item), and one that waits pays
 * the slot's 4 write units plus one more short receive. The time spent unslotted is bounded by one
 * short long poll per request, as any consume with `timeout_seconds: 0`.
 */
import { config } from '../config';
import { WAIT_SHORTENED_HEADER } from '../domain/long-poll-limits';
import { releaseSlot, takeSlot, type Slot } from '../storage/long-poll-slots';
import { logger } from '../observability';
import type { ApiRequest } from '../middleware/api-request';

/** Slack after the longest wait before a slot of a dead container frees itself. */
const LEASE_SLACK_MS = 5_000;

/**
 * The slots' period: at least the longest a live container holds a slot. A consume answers
 * within its wait plus settling (lambda/queues/consume.ts: by 26 s), and its function stops at
 * API Gateway's 29 s (lib/constructs/functions.ts): under the longest wait (25 s) plus the slack.
 */
export const slotPeriodMs = () => config().maxLongPollSeconds * 1000 + LEASE_SLACK_MS;

/**
 * Runs `consume` with the wait the bulkhead grants: `timeoutSeconds` when a slot is free (given
 * back when it ends), 0 when not (and the header says why). A consume that asks for no wait
 * takes no slot.
 */
export async function withLongPollSlot<T>(
  req: Pick<ApiRequest, 'namespace' | 'responseHeaders'>,
  timeoutSeconds: number,
  consume: (timeoutSeconds: number) => Promise<T>,
  isEmpty?: (result: T) => boolean,
): Promise<T> {
  if (!(timeoutSeconds > 0)) return consume(timeoutSeconds);
  if (isEmpty) {
    const started = Date.now();
    const first = await consume(0);
    const rest = Math.floor(timeoutSeconds - (Date.now() - started) / 1000);
    if (!isEmpty(first) || rest < 1) return first;
    return withLongPollSlot(req, rest, consume);
  }
  const cfg = config();
  let slot: Slot | undefined;
  try {
    const r = await takeSlot(req.namespace, { ...cfg.longPollLimits, pool: cfg.longPollPool, shards: cfg.longPollPoolShards }, slotPeriodMs());
    if (r.taken) slot = r.slot;
    else req.responseHeaders[WAIT_SHORTENED_HEADER] = r.full;
  } catch (e) {
    // Slots that cannot be read are no reason to refuse the consume, nor to let it hold an
    // execution uncounted: it answers with what is there.
    logger.warn('long-poll slots unavailable; answering without waiting', { error: (e as Error).message });
    req.responseHeaders[WAIT_SHORTENED_HEADER] = 'unavailable';
  }
  if (!slot) return consume(0);
  try {
    return await consume(timeoutSeconds);
  } finally {
    await releaseSlot(slot).catch((e) => logger.warn('long-poll slot not given back; it frees itself within two periods', { error: (e as Error).message }));
  }
}
