/**
 * A fair share of webhook delivery per namespace. The delivery function runs at
 * most its configured number of batches at once (the event source's maximum concurrency,
 * lib/constructs/webhook-delivery.ts), and one namespace may have at most `webhookNamespaceShare` deliveries in flight among them. A batch
 * admits each namespace's jobs against that count (storage/webhook-share.ts); the jobs of a
 * namespace over its share go back to the queue with a delay of a few seconds, as new messages
 * (so waiting never counts toward the DLQ's receives), and the batch reports them done. So a
 * namespace with a backlog of slow or failing receivers holds at most its share of the capacity,
 * and the jobs of other namespaces behind it in the queue are reached at once, not after the
 * backlog.
 *
 * Within a namespace, the jobs of webhooks seen to be slow take a lane of their own
 * with its own, smaller share (lambda/webhooks/rules/delivery-lanes.ts): a batch holding
 * them counts against the slow lane only, so a slow webhook can never hold the batches its
 * namespace's fast webhooks need.
 *
 * Most batches are fast, and a fast batch ends before it could hold anything: so the fast jobs of
 * webhooks this container has measured to be fast are admitted by a read of the count (1 read
 * unit), not a write, and counted only if the batch is still running {@link HOLD_AFTER_MS} after
 * it started (one ADD then, one to give back at its end). A batch of a fast webhook thus writes
 * nothing to the share (the share's two writes were 0.2 to 0.25 write units per
 * delivery, and its key the busiest). Jobs of a webhook the container has not measured yet are
 * counted from the start, as slow jobs are. The cost of the lag: a fast webhook that turns slow
 * can have one batch in each container (a container runs one batch at a time) running
 * uncounted, beyond its namespace's share, until that batch has run for the hold time or the
 * container has seen one slow request of it (./rules/delivery-lanes.ts): then the webhook takes the slow lane.
 * And batches admitted by reads that start within the same second all see the same room: a burst
 * can start more than the share (one batch per container), and those running at the hold time
 * count themselves over it (their jobs are already running), so the lane admits nothing more of
 * the namespace until they end (record 0019, "batches admitted by a read").
 *
 * The delivery queue is also an SQS fair queue (jobs carry their namespace as MessageGroupId,
 * ../adapters/delivery-queue.ts), which hands quiet namespaces' jobs out first. That reorders what
 * the function receives but reserves no capacity, so the share stays: measured beside another
 * namespace's 5 s receiver, a 0 ms webhook's p99 was 2.6 to 3.3 times its p99 alone with fair
 * queues only, 0.9 to 1.7 times with the share (docs/performance.md "Fairness between namespaces").
 *
 * The share counts first attempts (the delivery function). Retries run in the retry workflow,
 * paced by their own backoff, and hook publishes are bounded by the publish rate limit
 * (./hooks.ts).
 */
import { randomBytes } from 'node:crypto';
import { config } from '../core/config';
import { laneShares, type Lane } from './rules/delivery-lanes';
import { admitDeliveries, holdDeliveries, releaseDeliveries, roomFor, type ShareTime, type Taken } from './storage/webhook-share';
import { DELIVERY_BATCH_SIZE, DELIVERY_TIMEOUT_SECONDS, deferJobs } from './storage/delivery-queue';
import { logger } from '../core/observability';
import { isRetryableDependencyFailure, withRetries } from '../core/rules/dependency-errors';

/** A batch whose fast jobs are still running this long after it started counts them in the share. */
export const HOLD_AFTER_MS = 1000;

/**
 * A batch that started this long ago is gone: Lambda stops an invocation at the function's
 * timeout (https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html), 60 s for
 * the delivery function, and twice that leaves a margin for clocks and the admission's own time.
 * Its entries still in the share are those of a crashed invocation, and the next admission that
 * sees them removes them (storage/webhook-share.ts).
 */
export const STALE_AFTER_SECONDS = 2 * DELIVERY_TIMEOUT_SECONDS;

/**
 * A batch's give-back of its counts, tried about 3 s beyond the SDK's own retries (the length of a
 * short storage outage): a count not given back would hold its place until it is stale
 * ({@link STALE_AFTER_SECONDS}), and a namespace whose lane it fills would have every job deferred
 * until then (in the fault suite's 3 s DynamoDB outage, three slow-lane give-backs failed and no
 * delivery of the namespace was made while they held the lane). A give-back still failing is
 * owed: this container tries it again before its next batch's admissions ({@link payOwed}).
 * Give-backs are exact (storage/webhook-share.ts: conditional on the batch's own entry), so a
 * re-sent one, or one of a write that never applied, gives nothing back twice.
 */
const RELEASE_RETRIES = { tries: 6, firstDelayMs: 100, retryIf: isRetryableDependencyFailure };

/** How long a deferred job waits before it is received again: a few seconds, spread. */
const deferSeconds = () => 2 + Math.floor(Math.random() * 4);

export interface Shares {
  /** Whether the next job of `ns` in `lane` (in batch order) is within the namespace's share. */
  take(ns: string, lane?: Lane): boolean;
  /**
   * Counts the admitted fast jobs in the share now (done by itself {@link HOLD_AFTER_MS} after
   * the admission if the batch is still running; at most once).
   */
  hold(): Promise<void>;
  /** Gives the admitted deliveries back; call when the batch is done. */
  release(): Promise<void>;
}

/**
 * A job as the share sees it: its namespace, its lane (fast when not given), and whether this
 * container has measured its webhook's requests (./rules/delivery-lanes.ts; not when not given).
 */
export type ShareJob = string | { namespace: string; lane: Lane; measured?: boolean };

const warnUnavailable = (ns: string, e: unknown) =>
  // Fairness is a guard, not a gate: with the count unavailable, deliver.
  logger.warn('webhook delivery share unavailable; delivering without it', { namespace: ns, error: (e as Error).message });

/** Give-backs this container owes (their tries failed), for its next batch to pay; a bounded list. */
const owed: { ns: string; at: ShareTime; id: string; taken: Taken }[] = [];
const MAX_OWED = 100;

/**
 * Pays the give-backs owed (one try each; one failing stays owed), dropping those of batches that
 * are stale by `now`: an admission that sees their entries reclaims them. Nothing to do in the
 * common case; after an outage, the container's next batch frees its namespaces' lanes.
 */
async function payOwed(now: ShareTime): Promise<void> {
  const due = owed.splice(0).filter((o) => o.at.start >= now.staleBefore);
  const failed = await Promise.all(due.map((o) => releaseDeliveries(o.ns, o.at, o.id, o.taken).then(() => undefined, () => o)));
  owed.push(...failed.filter((o) => o !== undefined));
}

/** Admits the jobs of a batch, by namespace and lane, within each namespace's share. */

export async function admit(jobs: ShareJob[], nowMs = Date.now(), holdAfterMs = HOLD_AFTER_MS): Promise<Shares> {
  // The event source's maximum concurrency counts invocations, and an invocation is busy until
  // its slowest job ends: a namespace with one slow job in each of 20 batches would hold every
  // invocation while within a share of 50 jobs. So its jobs may also be in at most this many
  // batches at once (5 of 20 by default for the fast lane, 3 for the slow): the share in
  // invocations.
  const shares = laneShares(config().webhookNamespaceShare, DELIVERY_BATCH_SIZE);
  const start = Math.floor(nowMs / 1000);
  const at: ShareTime = { start, staleBefore: start - STALE_AFTER_SECONDS };
  if (owed.length) await payOwed(at);
  /** This batch's entries in the share (storage/webhook-share.ts): its give-backs are exact. */
  const id = randomBytes(6).toString('hex');
  const wanted = new Map<string, Record<Lane, number> & { unmeasured: boolean }>();
  for (const j of jobs) {
    const [ns, lane, measured] = typeof j === 'string' ? [j, 'fast' as const, false] : [j.namespace, j.lane, Boolean(j.measured)];
    const w = wanted.get(ns) ?? { fast: 0, slow: 0, unmeasured: false };
    w[lane]++;
    if (!measured && lane === 'fast') w.unmeasured = true;
    wanted.set(ns, w);
  }
  const admitted = new Map<string, Record<Lane, number>>();
  const taken = new Map<string, Taken>();
  /** Fast jobs admitted by a read, per namespace: counted by hold(). */
  const unheld = new Map<string, { jobs: number; batch: boolean }>();
  await Promise.all(
    [...wanted].map(async ([ns, w]) => {
      const got = { fast: 0, slow: 0 };
      /** Whether the slow lane answered: its answer stands whatever the fast admission does. */
      let slowAnswered = false;
      const t: Taken = {};
      /** The count an admission is adding, until it answers. */
      let adding: Taken = {};
      try {
        // Slow jobs first: a batch that holds any is the slow lane's, and its fast jobs ride in
        // it without taking a fast batch (they end at once; the batch lasts for the slow ones).
        if (w.slow) {
          adding = { slow: { jobs: w.slow, batch: true } };
          got.slow = await admitDeliveries(ns, at, id, w.slow, shares.slow.jobs, shares.slow.batches, 'slow');
          slowAnswered = true;
          adding = {};
          if (got.slow) t.slow = { jobs: got.slow, batch: true };
        }
        if (w.fast) {
          const ride = got.slow > 0;
          const batches = ride ? null : shares.fast.batches;
          if (w.unmeasured) {
            // A webhook this container has not measured yet may be slow: counted from the start.
            adding = { fast: { jobs: w.fast, batch: !ride } };
            got.fast = await admitDeliveries(ns, at, id, w.fast, shares.fast.jobs, batches, 'fast');
            adding = {};
            if (got.fast) t.fast = { jobs: got.fast, batch: !ride };
          } else {
            got.fast = await roomFor(ns, at, w.fast, shares.fast.jobs, batches, 'fast');
            if (got.fast) unheld.set(ns, { jobs: got.fast, batch: !ride });
          }
        }
      } catch (e) {
        warnUnavailable(ns, e);
        // The failed admission's ADD may have been applied with its answer lost: given back at the
        // batch's end like a count taken, exactly (nothing when it never applied). Only the lane
        // whose admission failed delivers uncounted: a refusal the share answered stays a refusal.
        // (The fast admission is the last write: when anything failed, it did not answer.)
        if (!slowAnswered) got.slow = w.slow;
        got.fast = w.fast;
        Object.assign(t, adding);
      }
      admitted.set(ns, got);
      taken.set(ns, t);
    }),
  );
  let holding: Promise<void> | undefined;
  const hold = () =>
    (holding ??= Promise.all(
      [...unheld].map(([ns, fast]) => {
        // Given back at the end whatever the hold's answer: it may have applied with it lost.
        taken.get(ns)!.fast = fast;
        return holdDeliveries(ns, at, id, 'fast', fast).catch((e) => warnUnavailable(ns, e));
      }),
    ).then(() => undefined));
  const timer = unheld.size ? setTimeout(() => void hold(), holdAfterMs) : undefined;
  timer?.unref();
  return {
    take(ns, lane = 'fast') {
      const left = admitted.get(ns);
      if (!left || left[lane] <= 0) return false;
      left[lane]--;
      return true;
    },
    hold,
    async release() {
      clearTimeout(timer);
      await holding;
      await Promise.all(
        [...taken].map(([ns, t]) =>
          withRetries(() => releaseDeliveries(ns, at, id, t), RELEASE_RETRIES).catch((e) => {
            logger.warn('webhook delivery share not given back yet; owed to the next batch', { namespace: ns, error: (e as Error).message });
            if (owed.length < MAX_OWED) owed.push({ ns, at, id, taken: t });
          }),
        ),
      );
    },
  };
}

/** Puts the jobs over their namespace's share back on the queue, delayed. */
export async function deferOverShare(bodies: string[]): Promise<void> {
  if (bodies.length) await deferJobs(bodies, deferSeconds());
}
