/**
 * Amazon SQS fair queues, as the local event source (./event-source.ts) applies them to the
 * messages it hands out. fauxqs has no fair queues (it keeps no MessageGroupId on a standard
 * queue, and hands messages out in arrival order); the rule below is what AWS documents:
 *
 * - A standard queue whose messages carry a `MessageGroupId` is a fair queue; the group is the
 *   tenant, and "each message without a MessageGroupId is treated as belonging to its own distinct
 *   tenant" (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-fair-queues-detailed.html,
 *   "Tenant identification").
 * - Detection ("How detection works"): a tenant is a noisy neighbour when either its concurrency
 *   share (its in-flight messages over all in-flight messages of the queue) is above 10 % while at
 *   least 30 of its messages are in flight, or its processing-time share (its recent share of the
 *   consumers' total processing time) is above 10 %. "These thresholds are approximate", and
 *   detection "may not activate at the exact values described": here they are exact.
 * - Delivery order ("How message delivery order changes"): once a tenant is noisy, a consumer
 *   receives quiet tenants' messages whenever any are available, until the noisy tenant's shares
 *   fall back to the quiet tenants' level. Noisy messages are neither dropped nor throttled: when
 *   no quiet message is waiting, consumers receive noisy ones as usual. With several noisy
 *   tenants, the one with the fewest messages in flight comes first.
 * - A tenant stops being noisy when its backlog is drained or it sent nothing for 5 minutes
 *   ("When a noisy neighbor becomes quiet"): here its status is judged again at each receive from
 *   its shares, and a tenant with nothing waiting is not ordered at all.
 * - Consumer capacity ("Consumer capacity considerations"): the concurrency measure works only
 *   when consumers process enough messages at once for one tenant's share to stand out; fair
 *   queues reorder what consumers receive, they reserve no capacity. A tenant whose messages hold
 *   every consumer still delays the others until a consumer is free.
 *
 * With Lambda, a message is in flight from the event source's receive to the delete after its
 * invocation ends (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html),
 * so a message's processing time is its whole batch's: a 0 ms job riding in a batch with a 5 s
 * job counts 5 s for its tenant, as in AWS.
 *
 * The documentation is silent on how long "recent" is for the processing-time share: here
 * {@link RECENT_MS}. Pure (no I/O): the event source keeps one {@link FairQueueState}.
 */

/** A tenant with more than this share of the queue's in-flight messages... */
const NOISY_CONCURRENCY_SHARE = 0.1;
/** ...and at least this many of its own in flight is noisy by concurrency. */
export const NOISY_MIN_IN_FLIGHT = 30;
/** A tenant with more than this share of the consumers' recent processing time is noisy. */
const NOISY_PROCESSING_SHARE = 0.1;
/** How far back "recent" processing time reaches (AWS does not say; a minute). */
export const RECENT_MS = 60_000;

/** One batch handed to the consumer: its messages' groups, when, and (once done) when it ended. */
interface Handed {
  groups: Map<string, number>;
  at: number;
  endedAt?: number;
}

/** What the queue knows of its groups: messages in flight and recent processing time. */
export class FairQueueState {
  private readonly inFlight = new Map<string, number>();
  /** Batches in flight, and those that ended within {@link RECENT_MS}. */
  private readonly handed = new Set<Handed>();

  /** Notes a batch handed to the consumer at `now` (groups of its messages; undefined: none). */
  hand(groups: (string | undefined)[], now: number): Handed {
    const h: Handed = { groups: new Map(), at: now };
    for (const g of groups) {
      if (g === undefined) continue;
      h.groups.set(g, (h.groups.get(g) ?? 0) + 1);
      this.inFlight.set(g, (this.inFlight.get(g) ?? 0) + 1);
    }
    this.handed.add(h);
    return h;
  }

  /** Notes that a batch's messages are no longer in flight (deleted, or back in the queue). */
  end(h: Handed, now: number): void {
    if (h.endedAt !== undefined) return;
    h.endedAt = now;
    for (const [g, n] of h.groups) {
      const left = (this.inFlight.get(g) ?? 0) - n;
      if (left > 0) this.inFlight.set(g, left);
      else this.inFlight.delete(g);
    }
  }

  /** Messages of group `g` in flight now. */
  inFlightOf(g: string): number {
    return this.inFlight.get(g) ?? 0;
  }

  /** Each group's processing time within the last {@link RECENT_MS} (ms, message by message). */
  processingMs(now: number): Map<string, number> {
    const since = now - RECENT_MS;
    const out = new Map<string, number>();
    for (const h of this.handed) {
      if (h.endedAt !== undefined && h.endedAt <= since) {
        this.handed.delete(h);
        continue;
      }
      const ms = Math.max(0, (h.endedAt ?? now) - Math.max(h.at, since));
      for (const [g, n] of h.groups) out.set(g, (out.get(g) ?? 0) + ms * n);
    }
    return out;
  }

  /** The groups that are noisy neighbours now (see the file's comment). */
  noisy(now: number): Set<string> {
    const out = new Set<string>();
    let total = 0;
    for (const n of this.inFlight.values()) total += n;
    for (const [g, n] of this.inFlight) if (n >= NOISY_MIN_IN_FLIGHT && n > NOISY_CONCURRENCY_SHARE * total) out.add(g);
    const time = this.processingMs(now);
    let all = 0;
    for (const ms of time.values()) all += ms;
    if (all > 0) for (const [g, ms] of time) if (ms > NOISY_PROCESSING_SHARE * all) out.add(g);
    return out;
  }
}

/**
 * Which of the waiting messages (in arrival order) a receive of at most `max` hands out, as
 * indexes into `waiting`: quiet tenants' messages first, in arrival order, then noisy tenants'
 * by their messages in flight, fewest first (ties in arrival order). A message without a group is
 * a tenant of its own, never noisy.
 * @example pick([{ group: 'a' }, { group: 'b' }], 1, new Set(['a']), () => 0) // [1]
 */
export function pick(waiting: { group?: string }[], max: number, noisy: Set<string>, inFlightOf: (g: string) => number): number[] {
  const quiet: number[] = [];
  const loud: number[] = [];
  waiting.forEach((m, i) => (m.group !== undefined && noisy.has(m.group) ? loud : quiet).push(i));
  if (quiet.length >= max) return quiet.slice(0, max);
  const by = (i: number) => inFlightOf(waiting[i].group!);
  loud.sort((a, b) => by(a) - by(b) || a - b);
  return [...quiet, ...loud.slice(0, max - quiet.length)];
}
