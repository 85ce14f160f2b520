/**
 * Judging a fault run: what the ledger (./workload.ts) and the final, fault-free reads say about
 * loss, refused publishes, double holds, duplicates and counters, and the figures printed for it.
 */
import type { Delivery } from './receiver';
import type { Ledger, Receive } from './workload';

/** Counters of the run's resources as the API answers them, and the truth they should equal. */
export interface CounterReads {
  queue: { message_count: number; truth: number };
  stream: { message_count: number; truth: number };
  subscription: { message_count: number; truth: number };
  webhook: { success_count: number; failure_count: number; truthSuccess: number; truthFailure: number };
}

/** The run's resources read without faults after the drain. */
export interface Stored {
  /** Markers of every message in the stream, from earliest to latest (repeats included). */
  stream: string[];
  /** Message ids and markers of every message in the subscription, read by a new subscriber. */
  subscription: { messageId: string; marker: string }[];
  webhook: Delivery[];
}

export interface Findings {
  /** Answers that were not an envelope, or a 5xx other than 500 INTERNAL_ERROR / 503 with Retry-After. */
  envelope: string[];
  /** Messages answered 201 that a binding never got, by binding. */
  lost: { queue: string[]; stream: string[]; streamGroup: string[]; subscriptionStored: string[]; subscriber: string[]; webhook: string[] };
  /** Markers of publishes answered only 4xx that some binding holds. */
  refusedButStored: string[];
  /** Messages held by more consumers at once than SQS had copies of them. */
  heldTwice: string[];
  /** Messages one subscriber id was given twice (DESIGN.md section 8: never). */
  subscriberTwice: string[];
  /** Queue messages received again after an ack of them answered acknowledged, with no second SQS copy to explain it. */
  deliveredAfterAck: string[];
  /** Counters that differ from the truth after the sweeper ran. */
  counters: string[];
}

export interface Duplicates {
  /** Messages stored more than once because a publish answered 5xx was stored and then retried. */
  retriedPublishes: number;
  /** Extra receives of a queue message whose earlier delivery was not acknowledged (expected). */
  queueRedeliveries: number;
  /** Receives of a queue message after an ack of it answered acknowledged. */
  queueAfterAck: number;
  /** Of those, explained by a second SQS copy (a SendMessageBatch applied, its answer lost, retried). */
  queueAfterAckFromCopies: number;
  /** Webhook POSTs of a message after an earlier POST of it failed (retries, expected). */
  webhookAfterFailure: number;
  /** Webhook POSTs of a message after the receiver had answered 2xx for it. */
  webhookAfterSuccess: number;
  /** Of those, of messages whose delivery job SQS held twice (a SendMessageBatch applied, its answer lost, retried). */
  webhookAfterSuccessFromJobCopies: number;
  /** Subscription messages the subscriber got twice. */
  subscriber: number;
}

/**
 * Acks answered 404 MESSAGE_NOT_FOUND although no ack of that message had been answered
 * acknowledged before: `first` on the ack's first try, `retried` on a try after a 5xx.
 */
export function unexplained404s(l: Ledger) {
  const firstOk = new Map<string, number>();
  for (const a of l.acks) if (a.outcome === 'acknowledged' && !firstOk.has(a.messageId)) firstOk.set(a.messageId, a.at);
  const wrong = l.acks.filter((a) => a.outcome === 'MESSAGE_NOT_FOUND' && !((firstOk.get(a.messageId) ?? Infinity) <= a.at));
  return { first: wrong.filter((a) => !a.afterServerError).length, retried: wrong.filter((a) => a.afterServerError).length };
}

/** Ids and markers of the messages a 201 answered, and the markers of publishes refused with 4xx only. */
export function outcomes(l: Ledger) {
  const created = new Map<string, string>(); // message id -> marker
  const refused: string[] = [];
  let gaveUp = 0;
  let retried = 0;
  for (const p of l.publishes) {
    if (p.attempts.length > 1) retried++;
    if (p.ids) p.ids.forEach((id, i) => created.set(id, p.markers[i]));
    else if (p.attempts.every((a) => /^4/.test(a) && !/^(429|409 IDEMPOTENCY_KEY_IN_USE)/.test(a))) refused.push(...p.markers);
    else gaveUp++;
  }
  return { created, refused, gaveUp, retried };
}

const countBy = <T>(items: T[], key: (t: T) => string) => {
  const m = new Map<string, number>();
  for (const i of items) m.set(key(i), (m.get(key(i)) ?? 0) + 1);
  return m;
};

/** Holds of one message that overlap more than its SQS copies allow. */
function heldTwice(receives: Receive[], copies: (id: string) => number): string[] {
  const out: string[] = [];
  const byMessage = new Map<string, Receive[]>();
  for (const r of receives) byMessage.set(r.messageId, [...(byMessage.get(r.messageId) ?? []), r]);
  for (const [id, rs] of byMessage) {
    const end = (r: Receive) => Math.min(r.until, r.ackedAt ?? r.until);
    for (const r of rs) {
      const holders = rs.filter((o) => o.answered <= r.answered && r.answered < end(o)).length;
      if (holders > copies(id)) {
        out.push(`${id}: ${holders} holders at ${new Date(r.answered).toISOString()} (consumers ${rs.map((o) => o.consumer).join(',')}), ${copies(id)} SQS cop${copies(id) === 1 ? 'y' : 'ies'}`);
        break;
      }
    }
  }
  return out;
}

export function judge(
  l: Ledger,
  stored: Stored,
  counters: CounterReads,
  envelope: string[],
  copies: (id: string) => number,
  jobCopies: (id: string) => number = () => 1,
): { findings: Findings; duplicates: Duplicates } {
  const { created, refused } = outcomes(l);
  const ids = [...created.keys()];
  const markers = new Set(created.values());
  const received = new Set(l.receives.map((r) => r.messageId));
  const streamStored = new Set(stored.stream);
  const streamRead = new Set(l.streamRead);
  const subStored = new Set(stored.subscription.map((s) => s.messageId));
  const subscribed = new Set(l.subscribed.map((s) => s.messageId));
  const delivered = new Set(stored.webhook.filter((d) => d.status < 300).map((d) => d.messageId));
  const refusedSet = new Set(refused);
  const anywhere = [
    ...l.receives.map((r) => r.marker),
    ...stored.stream,
    ...l.streamRead,
    ...stored.subscription.map((s) => s.marker),
    ...l.subscribed.map((s) => s.marker),
    ...stored.webhook.map((d) => d.marker),
  ];
  const c = counters;
  const counterProblems = [
    c.queue.message_count !== c.queue.truth && `queue message_count ${c.queue.message_count}, SQS holds ${c.queue.truth}`,
    c.stream.message_count !== c.stream.truth && `stream message_count ${c.stream.message_count}, the stream holds ${c.stream.truth}`,
    c.subscription.message_count !== c.subscription.truth && `subscription message_count ${c.subscription.message_count}, the subscription holds ${c.subscription.truth}`,
    c.webhook.success_count !== c.webhook.truthSuccess && `webhook success_count ${c.webhook.success_count}, deliveries answered 2xx ${c.webhook.truthSuccess}`,
    c.webhook.failure_count !== c.webhook.truthFailure && `webhook failure_count ${c.webhook.failure_count}, deliveries never answered 2xx ${c.webhook.truthFailure}`,
  ].filter((x): x is string => Boolean(x));

  const findings: Findings = {
    envelope,
    lost: {
      queue: ids.filter((id) => !received.has(id)),
      stream: [...markers].filter((m) => !streamStored.has(m)),
      streamGroup: [...markers].filter((m) => !streamRead.has(m)),
      subscriptionStored: ids.filter((id) => !subStored.has(id)),
      subscriber: ids.filter((id) => !subscribed.has(id)),
      webhook: ids.filter((id) => !delivered.has(id)),
    },
    refusedButStored: [...new Set(anywhere.filter((m) => refusedSet.has(m)))],
    heldTwice: heldTwice(l.receives, copies),
    subscriberTwice: [...countBy(l.subscribed, (s) => s.messageId)].filter(([, n]) => n > 1).map(([id, n]) => `${id} ×${n}`),
    deliveredAfterAck: [],
    counters: counterProblems,
  };

  // Duplicates, by what caused them.
  const idsPerMarker = new Map<string, Set<string>>();
  for (const r of [...l.receives, ...stored.subscription, ...stored.webhook]) {
    if (r.marker) idsPerMarker.set(r.marker, (idsPerMarker.get(r.marker) ?? new Set()).add(r.messageId));
  }
  let queueRedeliveries = 0;
  let queueAfterAck = 0;
  let queueAfterAckFromCopies = 0;
  const firstAck = new Map<string, number>();
  for (const r of [...l.receives].sort((a, b) => a.answered - b.answered)) {
    const acked = firstAck.get(r.messageId);
    if (acked !== undefined && acked <= r.sent) {
      queueAfterAck++;
      if (copies(r.messageId) > 1) queueAfterAckFromCopies++;
      else findings.deliveredAfterAck.push(`${r.messageId} received at ${new Date(r.answered).toISOString()}, acknowledged at ${new Date(acked).toISOString()}`);
    } else if (l.receives.some((o) => o !== r && o.messageId === r.messageId && o.answered < r.answered)) queueRedeliveries++;
    if (r.ackedAt !== undefined && !firstAck.has(r.messageId)) firstAck.set(r.messageId, r.ackedAt);
  }
  let webhookAfterFailure = 0;
  let webhookAfterSuccess = 0;
  let webhookAfterSuccessFromJobCopies = 0;
  const okAt = new Map<string, number>();
  const seen = new Set<string>();
  for (const d of [...stored.webhook].sort((a, b) => a.at - b.at)) {
    if (okAt.has(d.messageId)) {
      webhookAfterSuccess++;
      if (jobCopies(d.messageId) > 1) webhookAfterSuccessFromJobCopies++;
    }
    else if (seen.has(d.messageId)) webhookAfterFailure++;
    seen.add(d.messageId);
    if (d.status < 300 && !okAt.has(d.messageId)) okAt.set(d.messageId, d.at);
  }
  const duplicates: Duplicates = {
    retriedPublishes: [...idsPerMarker.values()].filter((s) => s.size > 1).length,
    queueRedeliveries,
    queueAfterAck,
    queueAfterAckFromCopies,
    webhookAfterFailure,
    webhookAfterSuccess,
    webhookAfterSuccessFromJobCopies,
    subscriber: findings.subscriberTwice.length,
  };
  return { findings, duplicates };
}

/** Lost counts per binding, for the figures. */
export const lostCounts = (f: Findings) => Object.fromEntries(Object.entries(f.lost).map(([k, v]) => [k, v.length]));
