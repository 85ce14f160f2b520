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
 * Within a namespace, the jobs of webhooks seen to be slow (./lanes.ts) take a lane of their own
 * with its own, smaller share (lambda/domain/delivery-lanes.ts, issue 22 item 5): a batch holding
 * them counts against the slow lane only, so a slow webhook can never hold the batches its
 * namespace's fast webhooks need.
 *
 * The share counts first attempts (the delivery function). Retries run in the retry workflow,
 * paced by their own backoff, and hook publishes are bounded by the publish rate limit
 * (./hooks.ts).
 */
import { config } from '../config';
import { laneShares, type Lane } from '../domain/delivery-lanes';
import { admitDeliveries, releaseDeliveries, shareMinute, type Taken } from '../storage/webhook-share';
import { DELIVERY_BATCH_SIZE, deferJobs } from '../adapters/delivery-queue';
import { logger } from '../observability';

/** How long a deferred job waits before it is received again: a few seconds, spread. */
export const deferSeconds = () => 2 + Math.floor(Math.random() * 4);

export interface Shares {
  /** Whether the next job of `ns` in `lane` (in batch order) is within the namespace's share. */
  take(ns: string, lane?: Lane): boolean;
  /** Gives the admitted deliveries back; call when the batch is done. */
  release(): Promise<void>;
}

/** A job as the share sees it: its namespace, and its lane (fast when not given). */
export type ShareJob = string | { namespace: string; lane: Lane };

const warnUnavailable = (ns: string, e: unknown) =>
  // Fairness is a guard, not a gate: with the count unavailable, deliver.
  logger.warn('webhook delivery share unavailable; delivering without it', { namespace: ns, error: (e as Error).message });

/** Admits the jobs of a batch, by namespace and lane, within each namespace's share. */
export async function admit(jobs: ShareJob[], nowMs = Date.now()): Promise<Shares> {
  // The event source's maximum concurrency counts invocations, and an invocation is busy until
  // its slowest job ends: a namespace with one slow job in each of 20 batches would hold every
  // invocation while within a share of 50 jobs. So its jobs may also be in at most this many
  // batches at once (5 of 20 by default for the fast lane, 3 for the slow): the share in
  // invocations (issue 22).
  const shares = laneShares(config().webhookNamespaceShare, DELIVERY_BATCH_SIZE);
  const minute = shareMinute(nowMs);
  const wanted = new Map<string, Record<Lane, number>>();
  for (const j of jobs) {
    const [ns, lane] = typeof j === 'string' ? [j, 'fast' as const] : [j.namespace, j.lane];
    const w = wanted.get(ns) ?? { fast: 0, slow: 0 };
    w[lane]++;
    wanted.set(ns, w);
  }
  const admitted = new Map<string, Record<Lane, number>>();
  const taken = new Map<string, Taken>();
  await Promise.all(
    [...wanted].map(async ([ns, w]) => {
      const got = { fast: 0, slow: 0 };
      const t: Taken = {};
      try {
        // Slow jobs first: a batch that holds any is the slow lane's, and its fast jobs ride in
        // it without taking a fast batch (they end at once; the batch lasts for the slow ones).
        if (w.slow) {
          got.slow = await admitDeliveries(ns, minute, w.slow, shares.slow.jobs, shares.slow.batches, 'slow');
          if (got.slow) t.slow = { jobs: got.slow, batch: true };
        }
        if (w.fast) {
          const ride = got.slow > 0;
          got.fast = await admitDeliveries(ns, minute, w.fast, shares.fast.jobs, ride ? null : shares.fast.batches, 'fast');
          if (got.fast) t.fast = { jobs: got.fast, batch: !ride };
        }
      } catch (e) {
        warnUnavailable(ns, e);
        if (!t.slow) got.slow = w.slow;
        got.fast = w.fast;
      }
      admitted.set(ns, got);
      taken.set(ns, t);
    }),
  );
  return {
    take(ns, lane = 'fast') {
      const left = admitted.get(ns);
      if (!left || left[lane] <= 0) return false;
      left[lane]--;
      return true;
    },
    async release() {
      await Promise.all(
        [...taken].map(([ns, t]) =>
          releaseDeliveries(ns, minute, t).catch((e) => logger.warn('webhook delivery share not given back; it lapses with its minute', { namespace: ns, error: (e as Error).message })),
        ),
      );
    },
  };
}

/** Puts the jobs over their namespace's share back on the queue, delayed. */
export async function deferOverShare(bodies: string[]): Promise<void> {
  if (bodies.length) await deferJobs(bodies, deferSeconds());
}
