/**
 * Delivery lanes: how a slow receiver is kept from holding the delivery
 * capacity another webhook of its namespace needs. Pure rules, and the latencies this container
 * has seen (below); lambda/webhooks/share.ts admits by lane.
 *
 * A delivery invocation is busy until its slowest job ends (Lambda's SQS event source counts
 * invocations, not jobs: https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html),
 * so a batch holding one job of a 200 ms receiver holds its place for 200 ms, however fast its
 * other jobs are. A namespace may hold only a few batches at once (its share in invocations); if
 * a slow webhook's jobs sit in each of them, the namespace's other webhooks wait behind it. So a
 * webhook seen to be slow (its recent requests took long on average) goes to the slow lane: the
 * batches holding its jobs count against a share of their own, and never against the fast lane's,
 * which stays free for the namespace's other webhooks. Jobs of a fast webhook that share a batch
 * with slow jobs are delivered at once, in that batch.
 */

export type Lane = 'fast' | 'slow';

/** A webhook whose requests average this long or more is slow... */
export const SLOW_ENTER_MS = 150;
/** ...until they average less than this (a gap, so a webhook near the line does not flip lanes each batch). */
export const SLOW_LEAVE_MS = 75;
/** Weight of the newest request in the average (an exponential moving average). */
const NEWEST_WEIGHT = 0.3;

export interface Latency {
  /** The moving average of the webhook's request durations (ms). */
  ms: number;
  lane: Lane;
}

/**
 * The latency after one more request of `durationMs` (a timeout counts its whole wait). The first
 * request sets the average; the lane changes only when the average crosses the gap's far side.
 */
export function nextLatency(prev: Latency | undefined, durationMs: number): Latency {
  const d = Math.max(0, durationMs);
  const ms = prev ? prev.ms + NEWEST_WEIGHT * (d - prev.ms) : d;
  const was = prev?.lane ?? 'fast';
  const lane: Lane = was === 'fast' ? (ms >= SLOW_ENTER_MS ? 'slow' : 'fast') : ms < SLOW_LEAVE_MS ? 'fast' : 'slow';
  return { ms, lane };
}

export interface LaneShare {
  /** Jobs in flight at once. */
  jobs: number;
  /** Batches (delivery invocations) holding any of them at once. */
  batches: number;
}

/**
 * The namespace's share in each lane, from its share in jobs (`webhookNamespaceShare`) and the
 * batch size. The fast lane keeps the whole share (in jobs and in batches), as before lanes; the
 * slow lane gets half of it, so one namespace holds at most ceil(share / batch) + ceil(share / 2 /
 * batch) invocations (5 + 3 of the stack's 20 at the defaults), and its slow webhooks at most 3.
 */
export function laneShares(share: number, batchSize: number): Record<Lane, LaneShare> {
  const s = Math.max(1, share);
  const slow = Math.max(1, Math.ceil(s / 2));
  return {
    fast: { jobs: s, batches: Math.max(1, Math.ceil(s / batchSize)) },
    slow: { jobs: slow, batches: Math.max(1, Math.ceil(slow / batchSize)) },
  };
}

/*
 * Which lane a webhook's jobs take: from the durations of its recent requests as this container
 * saw them. Nothing is stored: each container learns a slow webhook from its own first request to
 * it (the jobs it receives before that request ends land in the fast lane), and a container that
 * never saw a webhook treats it as fast. Kept for the most recently seen webhooks only, so memory
 * stays bounded.
 */

const MAX_WEBHOOKS = 1000;
const seen = new Map<string, Latency>();

/** Notes one request of webhook `webhookId` (its id: a recreated webhook starts afresh). */
export function noteRequest(webhookId: string, durationMs: number): void {
  const next = nextLatency(seen.get(webhookId), durationMs);
  seen.delete(webhookId);
  if (seen.size >= MAX_WEBHOOKS) seen.delete(seen.keys().next().value as string);
  seen.set(webhookId, next);
}

/** Whether this container has measured a request of webhook `webhookId` (recently). */
export const measured = (webhookId: string): boolean => seen.has(webhookId);

/** The lane of webhook `webhookId`'s next jobs. */
export const laneOf = (webhookId: string): Lane => seen.get(webhookId)?.lane ?? 'fast';
