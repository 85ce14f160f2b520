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
 */
import { randomUUID } from 'node:crypto';
import { config } from '../config';
import { WAIT_SHORTENED_HEADER } from '../domain/long-poll-limits';
import { releaseSlot, takeSlot } from '../storage/long-poll-slots';
import { logger } from '../observability';
import type { ApiRequest } from '../middleware/api-request';

/** Slack after the longest wait before a lease of a dead container frees itself. */
const LEASE_SLACK_MS = 5_000;

/**
 * Runs `consume` with the wait the bulkhead grants: `timeoutSeconds` when a slot is free (given
 * back when it ends), 0 when not (and the header says why). A consume that asks for no wait
 * takes no slot.
 */
export async function withLongPollSlot<T>(req: Pick<ApiRequest, 'namespace' | 'responseHeaders'>, timeoutSeconds: number, consume: (timeoutSeconds: number) => Promise<T>): Promise<T> {
  if (!(timeoutSeconds > 0)) return consume(timeoutSeconds);
  const cfg = config();
  const wait = Math.min(timeoutSeconds, cfg.maxLongPollSeconds);
  const leaseId = randomUUID();
  let taken = false;
  try {
    const r = await takeSlot(req.namespace, leaseId, Date.now() + wait * 1000 + LEASE_SLACK_MS, { ...cfg.longPollLimits, pool: cfg.longPollPool });
    taken = r.taken;
    if (!r.taken) req.responseHeaders[WAIT_SHORTENED_HEADER] = r.full === 'contended' ? 'total' : r.full;
  } catch (e) {
    // Slots that cannot be read are no reason to refuse the consume, nor to let it hold an
    // execution uncounted: it answers with what is there.
    logger.warn('long-poll slots unavailable; answering without waiting', { error: (e as Error).message });
    req.responseHeaders[WAIT_SHORTENED_HEADER] = 'unavailable';
  }
  if (!taken) return consume(0);
  try {
    return await consume(timeoutSeconds);
  } finally {
    await releaseSlot(req.namespace, leaseId, cfg.longPollPool).catch((e) => logger.warn('long-poll slot not given back; it expires with its lease', { error: (e as Error).message }));
  }
}
