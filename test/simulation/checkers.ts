/**
 * The checkers: each compares what the API promised (the ledger, ./ledger.ts, and what the actors
 * saw, ./actors.ts) with what the service then holds, read through the API. Each returns its
 * violations with the step that made the promise and the evidence; ./known-defects.ts says which
 * are open issues.
 */
import type { Seen } from './actors';
import type { Ledger } from './ledger';

export interface Violation {
  checker: string;
  /** The step whose promise was broken (the earliest, when several). */
  step: number;
  /** How many promises it broke. */
  count: number;
  evidence: string;
}

/** One violation per checker: the count, the earliest step, the first few cases. */
function collect(checker: string, cases: { step: number; what: string }[], what: string): Violation[] {
  if (!cases.length) return [];
  const sorted = [...cases].sort((a, b) => a.step - b.step);
  return [{ checker, step: sorted[0].step, count: cases.length, evidence: `${cases.length} ${what}: ${sorted.slice(0, 4).map((c) => c.what).join('; ')}` }];
}

const counts = (markers: string[]) => {
  const m = new Map<string, number>();
  for (const k of markers) m.set(k, (m.get(k) ?? 0) + 1);
  return m;
};

/**
 * Right after a step: a 201'd stream or subscription message is readable at once (docs:
 * read-your-writes), but for one the docs let readers wait for. Readers stop before a block whose
 * publish has not cleared its reservation yet, for at most the settle time (35 s,
 * docs/streams-and-subscriptions.md "Readers wait for a publish's block"): a publish still running
 * (a 504'd handler goes on), or one whose clearing failed. A message the same reader, following
 * `next_offset` (a subscriber: its cursor), returned only once that time passed (`later`) was held
 * back, not lost, and is no violation; one it never returned was skipped or lost.
 */
export function readYourWrites(checker: string, seen: Seen, step: number, readSoFar: string[], later: string[] = []): Violation[] {
  const have = new Set([...readSoFar, ...later]);
  const missing = (seen.streamByStep.get(step) ?? []).filter((m) => !have.has(m));
  return collect(checker, missing.map((m) => ({ step, what: m })), 'messages answered 201 and not readable right after the step nor once the settle time passed');
}

/** Markers of `step` answered 201 and not in `read` (what a read-your-writes reader is still to return). */
export const unread = (seen: Seen, step: number, read: string[]) => {
  const have = new Set(read);
  return (seen.streamByStep.get(step) ?? []).filter((m) => !have.has(m));
};

/** Both answers of an Idempotency-Key sent twice at once name one message. */
export function idempotency(seen: Seen): Violation[] {
  const bad = seen.idempotent.filter((p) => p.ids.length === 2 && p.ids[0] !== p.ids[1]);
  return collect('idempotency-one-message', bad.map((p) => ({ step: p.step, what: `${p.key}: ${p.ids.join(' != ')}` })), 'keys answered 201 with two message ids');
}

/** Every message answered 201 for `topicPrefix` is in the log exactly once. */
export function exactlyOnceInLog(checker: string, ledger: Ledger, topicPrefix: string, read: string[]): Violation[] {
  const n = counts(read);
  const lost: { step: number; what: string }[] = [];
  const twice: { step: number; what: string }[] = [];
  for (const p of ledger.promised.values()) {
    if (!p.topic.startsWith(topicPrefix)) continue;
    const c = n.get(p.marker) ?? 0;
    if (c === 0) lost.push({ step: p.step, what: `${p.id} (${p.marker})` });
    if (c > 1) twice.push({ step: p.step, what: `${p.id} x${c}` });
  }
  return [...collect(`${checker}-201-missing`, lost, 'messages answered 201 and not in the log'), ...collect(`${checker}-twice`, twice, 'messages in the log more than once')];
}

/** Work queue: every 201 message received at least once; none received after its ack answered acknowledged (but an SQS copy). */
export function workQueue(ledger: Ledger, seen: Seen, topicPrefix: string, drained: string[], copies: (id: string) => number): Violation[] {
  const received = new Set([...seen.workReceives.map((r) => r.marker), ...drained]);
  const lost = [...ledger.promised.values()].filter((p) => p.topic.startsWith(topicPrefix) && !received.has(p.marker)).map((p) => ({ step: p.step, what: `${p.id} (${p.marker})` }));
  const afterAck = seen.workReceives
    .filter((r) => (seen.workAcked.get(r.marker) ?? Infinity) < r.sentAt && copies(r.id) < 2)
    .map((r) => ({ step: r.step, what: `${r.id} received ${r.sentAt - seen.workAcked.get(r.marker)!} ms after its ack` }));
  return [...collect('queue-201-never-delivered', lost, 'messages answered 201 and never received'), ...collect('queue-delivered-after-ack', afterAck, 'receives after an acknowledged ack')];
}

/** Poison queue: every 201 message dead-lettered exactly once (distinct dead-letter messages per marker). */
export function deadLetteredOnce(ledger: Ledger, seen: Seen, dead: [string, string][]): Violation[] {
  const ids = new Map<string, Set<string>>();
  for (const [m, id] of dead) ids.set(m, (ids.get(m) ?? new Set()).add(id));
  const step = (m: string) => ledger.promised.get(m)?.step ?? 0;
  const twice = seen.poison.filter((m) => (ids.get(m)?.size ?? 0) > 1).map((m) => ({ step: step(m), what: `${ledger.promised.get(m)?.id} dead-lettered ${ids.get(m)!.size} times` }));
  const never = seen.poison.filter((m) => !ids.has(m)).map((m) => ({ step: step(m), what: `${ledger.promised.get(m)?.id} (${m})` }));
  return [...collect('dead-lettered-more-than-once', twice, 'messages dead-lettered more than once'), ...collect('dead-letter-lost', never, 'exhausted messages never dead-lettered')];
}

/** A queue's message_count equals the truth (SQS's count plus the held messages not cancelled). */
export function countEquals(checker: string, queue: string, when: string, counted: number, truth: number, step: number, detail?: string): Violation[] {
  return counted === truth ? [] : [{ checker, step, count: 1, evidence: `${queue} ${when}: message_count ${counted}, truth ${truth}${detail ? ` (${detail})` : ''}` }];
}

/** Where the service has a held message: still held (not in SQS), handed over to the queue (in SQS), or cancelled. */
export type HeldState = 'held' | 'handed' | 'cancelled';

/**
 * A held queue's truth: SQS's count plus the messages answered 201 that the service still holds.
 * A handed-over one is in SQS's count already, and a cancel is what the service did, whatever
 * its answer said (a cancel answered 5xx may have cancelled).
 */
export function heldQueueTruth(sqsCount: number, held: string[], states: Map<string, HeldState>): number {
  return sqsCount + held.filter((id) => states.get(id) === 'held').length;
}

/**
 * Every schedule answered 201 ran once at its time, its message is in the stream, and no run was
 * refused. Once: the subscription's copies (`subscribed`: marker and message id) name one message
 * id per time; the docs allow the same run again with the same id (a tick that died after its
 * publish), not a second message.
 */
export function schedulesRanOnce(seen: Seen, read: string[], states: Map<string, { last_run_at: string | null; last_error: unknown; claim?: string }>, subscribed: [string, string][] = []): Violation[] {
  const n = counts(read);
  const ids = new Map<string, Set<string>>();
  for (const [m, id] of subscribed) ids.set(m, (ids.get(m) ?? new Set()).add(id));
  const missing: { step: number; what: string }[] = [];
  const twice: { step: number; what: string }[] = [];
  const refused: { step: number; what: string }[] = [];
  for (const s of seen.schedules) {
    const marker = `${s.name}@${new Date(s.startAt).toISOString()}`;
    const c = n.get(marker) ?? 0;
    const st = states.get(s.name);
    if (c === 0) missing.push({ step: s.step, what: `${s.name} (last_run_at ${st?.last_run_at}, last_error ${JSON.stringify(st?.last_error ?? null)}${st?.claim ? `, ${st.claim}` : ''})` });
    if ((ids.get(marker)?.size ?? 0) > 1) twice.push({ step: s.step, what: `${marker}: ${[...ids.get(marker)!].join(', ')}` });
    if (st?.last_error) refused.push({ step: s.step, what: `${s.name}: ${JSON.stringify(st.last_error)}` });
  }
  return [
    ...collect('schedule-run-missing', missing, 'scheduled times whose message is not in the stream'),
    ...collect('schedule-run-twice', twice, 'scheduled times published more than once'),
    ...collect('schedule-run-refused', refused, 'runs recorded as refused though nothing the client did refused them'),
  ];
}

/**
 * Every answer is an envelope, and a 5xx only 500 INTERNAL_ERROR, 503 SERVICE_UNAVAILABLE with
 * Retry-After, or 504 INTEGRATION_TIMEOUT (the gateway's answer to a handler past 29 s,
 * docs/aws-parity.md "Timeouts and crashes"; a loaded machine reaches it).
 */
export function envelopes(violations: string[]): Violation[] {
  const undocumented = violations.filter((v) => !/: 504 INTEGRATION_TIMEOUT \(/.test(v));
  return collect('answer-documented', undocumented.map((v) => ({ step: 0, what: v })), 'answers outside the envelope rules');
}
