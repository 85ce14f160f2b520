/**
 * SQS fair queues, emulated for the local event source (fauxqs has none). A standard queue whose
 * messages carry a MessageGroupId is a fair queue: each group is a tenant, and "each message
 * without a MessageGroupId is treated as belonging to its own distinct tenant". A tenant is a
 * noisy neighbour when it holds "more than 10% of in-flight messages in the queue and has at least
 * 30 of its own messages in flight", or when its "share of recent total consumer processing time
 * exceeds 10%"; then "consumer instances polling for messages receive messages from quiet tenants
 * whenever quiet tenant messages are available", and among several noisy tenants "from the noisy
 * tenant with the fewest in-flight messages first". Noisy messages are neither dropped nor
 * throttled: with no quiet message waiting they are received as usual ("How Amazon SQS fair
 * queues work",
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-fair-queues-detailed.html;
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-fair-queues.html).
 *
 * No kinder than AWS: a message is in flight, and its processing time counts, from its receive to
 * its delete, so a fast job riding in a slow batch counts as slow (SQS sees only the delete);
 * in-progress time counts as it goes. "Recent" is not quantified by AWS: the window here is
 * {@link RECENT_MS}. The exact thresholds are used (AWS calls its own approximate).
 */

/** Concurrency share: more than this fraction of the queue's in-flight messages... */
export const NOISY_INFLIGHT_SHARE = 0.1;
/** ...and at least this many of the tenant's own in flight. */
export const NOISY_INFLIGHT_MIN = 30;
/** Processing-time share: more than this fraction of recent consumer processing time. */
export const NOISY_TIME_SHARE = 0.1;
/** What "recent" processing time means here (AWS does not say). */
export const RECENT_MS = 30_000;

export interface Tenanted {
  /** The message's MessageGroupId; undefined is a tenant of its own. */
  group?: string;
  /** Epoch ms SQS stored it (SentTimestamp): oldest first within a tenant's turn. */
  sentAt: number;
}

export class FairQueueState {
  private readonly inFlight = new Map<string, { n: number; since: number[] }>();
  private done: { group: string; at: number; ms: number }[] = [];
  private solo = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** The tenant a message belongs to. */
  tenantOf(m: Tenanted & { id?: string }): string {
    return m.group !== undefined ? `g:${m.group}` : `solo:${m.id ?? ++this.solo}`;
  }

  /** Messages handed to a consumer (they are in flight until {@link finish}). */
  start(tenants: string[]): number {
    const at = this.now();
    for (const t of tenants) {
      const e = this.inFlight.get(t) ?? { n: 0, since: [] };
      e.n++;
      e.since.push(at);
      this.inFlight.set(t, e);
    }
    return at;
  }

  /** Messages deleted or handed back (started together at `startedAt`). */
  finish(tenants: string[], startedAt: number): void {
    const at = this.now();
    for (const t of tenants) {
      const e = this.inFlight.get(t);
      if (!e) continue;
      e.n--;
      const i = e.since.indexOf(startedAt);
      if (i >= 0) e.since.splice(i, 1);
      if (!e.n) this.inFlight.delete(t);
      this.done.push({ group: t, at, ms: at - startedAt });
    }
  }

  inFlightOf(t: string) {
    return this.inFlight.get(t)?.n ?? 0;
  }

  /** Processing time per tenant over the last {@link RECENT_MS}: finished messages and the elapsed part of those in flight. */
  private recentTime(): Map<string, number> {
    const now = this.now();
    const from = now - RECENT_MS;
    this.done = this.done.filter((d) => d.at > from);
    const out = new Map<string, number>();
    const add = (t: string, ms: number) => out.set(t, (out.get(t) ?? 0) + Math.max(0, ms));
    for (const d of this.done) add(d.group, Math.min(d.ms, d.at - from));
    for (const [t, e] of this.inFlight) for (const s of e.since) add(t, now - Math.max(s, from));
    return out;
  }

  /** The tenants that are noisy now, by the documented thresholds. */
  noisy(): Set<string> {
    const out = new Set<string>();
    let total = 0;
    for (const e of this.inFlight.values()) total += e.n;
    for (const [t, e] of this.inFlight) if (e.n >= NOISY_INFLIGHT_MIN && e.n > NOISY_INFLIGHT_SHARE * total) out.add(t);
    const time = this.recentTime();
    let all = 0;
    for (const ms of time.values()) all += ms;
    if (all > 0) for (const [t, ms] of time) if (ms > NOISY_TIME_SHARE * all) out.add(t);
    return out;
  }

  /**
   * Orders waiting messages as a fair queue hands them out: quiet tenants' first (oldest first),
   * then noisy tenants', the one with the fewest in flight first.
   */
  order<T extends Tenanted & { id?: string }>(waiting: T[]): T[] {
    const noisy = this.noisy();
    const rank = (m: T) => {
      const t = this.tenantOf(m);
      return noisy.has(t) ? 1 + this.inFlightOf(t) : 0;
    };
    return waiting
      .map((m) => ({ m, r: rank(m) }))
      .sort((a, b) => a.r - b.r || a.m.sentAt - b.m.sentAt)
      .map((x) => x.m);
  }
}
