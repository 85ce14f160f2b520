/**
 * A fair share of webhook delivery per namespace (issue 12 item 2). The delivery function runs at
 * most DELIVERY_MAX_CONCURRENCY batches at once (the event source's maximum concurrency), and one
 * namespace may have at most `webhookNamespaceShare` deliveries in flight among them. A batch
 * admits each namespace's jobs against that count (storage/webhook-share.ts); the jobs of a
 * namespace over its share go back to the queue with a delay of a few seconds, as new messages
 * (so waiting never counts toward the DLQ's receives), and the batch reports them done. So a
 * namespace with a backlog of slow or failing receivers holds at most its share of the capacity,
 * and the jobs of other namespaces behind it in the queue are reached at once, not after the
 * backlog.
 *
 * The share counts first attempts (the delivery function). Retries run in the retry workflow,
 * paced by their own backoff, and hook publishes are bounded by the publish rate limit
 * (./hooks.ts).
 */
import { config } from '../config';
import { admitDeliveries, releaseDeliveries, shareMinute } from '../storage/webhook-share';
import { DELIVERY_BATCH_SIZE, deferJobs } from '../adapters/delivery-queue';
import { logger } from '../observability';

/** How long a deferred job waits before it is received again: a few seconds, spread. */
export const deferSeconds = () => 2 + Math.floor(Math.random() * 4);

export interface Shares {
  /** Whether the next job of `ns` (in batch order) is within the namespace's share. */
  take(ns: string): boolean;
  /** Gives the admitted deliveries back; call when the batch is done. */
  release(): Promise<void>;
}

/** Admits the jobs of a batch, by namespace, within each namespace's share. */
export async function admit(namespaces: string[], nowMs = Date.now()): Promise<Shares> {
  const share = config().webhookNamespaceShare;
  // The event source's maximum concurrency counts invocations, and an invocation is busy until
  // its slowest job ends: a namespace with one slow job in each of 20 batches would hold every
  // invocation while within a share of 50 jobs. So its jobs may also be in at most this many
  // batches at once (5 of 20 by default): the share in invocations (issue 22).
  const batches = Math.max(1, Math.ceil(share / DELIVERY_BATCH_SIZE));
  const minute = shareMinute(nowMs);
  const wanted = new Map<string, number>();
  for (const ns of namespaces) wanted.set(ns, (wanted.get(ns) ?? 0) + 1);
  const admitted = new Map<string, number>();
  const counted = new Map<string, number>();
  await Promise.all(
    [...wanted].map(async ([ns, n]) => {
      try {
        const got = await admitDeliveries(ns, minute, n, share, batches);
        admitted.set(ns, got);
        counted.set(ns, got);
      } catch (e) {
        // Fairness is a guard, not a gate: with the count unavailable, deliver.
        logger.warn('webhook delivery share unavailable; delivering without it', { namespace: ns, error: (e as Error).message });
        admitted.set(ns, n);
      }
    }),
  );
  return {
    take(ns) {
      const left = admitted.get(ns) ?? 0;
      if (left <= 0) return false;
      admitted.set(ns, left - 1);
      return true;
    },
    async release() {
      await Promise.all(
        [...counted].map(([ns, n]) =>
          releaseDeliveries(ns, minute, n).catch((e) => logger.warn('webhook delivery share not given back; it lapses with its minute', { namespace: ns, error: (e as Error).message })),
        ),
      );
    },
  };
}

/** Puts the jobs over their namespace's share back on the queue, delayed. */
export async function deferOverShare(bodies: string[]): Promise<void> {
  if (bodies.length) await deferJobs(bodies, deferSeconds());
}
