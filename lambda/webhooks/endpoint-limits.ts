/**
 * Per-webhook delivery limits and endpoint health on the delivery path:
 * ./deliver.ts asks {@link gate} before each attempt (first attempts from SQS and retries in the
 * workflow alike, so the limits hold across both) and reports each attempt and each delivery
 * that ended in failure ({@link afterAttempt}, {@link afterFinalFailure}).
 *
 * - A webhook with neither `rate_limit` nor `max_in_flight` and no health state passes the gate
 *   without any call: it pays nothing for this module.
 * - A delivery the gate holds back waits (its SQS job comes back later as a new message, or its
 *   workflow Waits and asks again): not an attempt, not a retry, not failed.
 * - The rate and in-flight takes of one container are gathered over a few milliseconds (a
 *   batch's jobs of one webhook reach the gate together) and made as one storage call.
 * - After a run of CIRCUIT_TRIP_ATTEMPTS failed attempts the circuit opens: one probe at a time may
 *   attempt; the others wait for it.
 *   The probe's success closes the circuit; a run of deliveries that end in failure (or
 *   continuous failure for `disable_after`) disables the webhook and announces it on
 *   {@link WEBHOOK_DISABLED_TOPIC}, judged on each final failure and, while the circuit is
 *   open, at the gate from the run's start (so traffic the circuit holds back cannot delay it).
 */
import { circuitOpen, dueAtGate, type EndpointHealth, type NamespaceHealthDefaults, probeGapStep, probeGapStepAfterFailure, probeHoldMs, shouldDisable, ticketDueWindow, waitSeconds, WEBHOOK_DISABLED_TOPIC } from './rules/endpoint-health';
import { ApiError } from '../core/rules/errors';
import { isoTime } from '../core/rules/envelope';
import { publishMessages } from '../publishing/publish';
import { claimRateSlot } from './storage/webhook-limits';
import { atGate, confirmPlace, leaseEnd, placeFirst, releasePlaces, takeInFlightGathered } from './place-wait';
import { closeCircuit, countFinalFailure, disableForHealth, eventPublished, openCircuit, probeEnded, renewProbe, restartRun, takeProbe, namespaceHealthDefaults, type PendingDisabledEvent } from './storage/webhook-health';
import { lastSuccessAt } from './storage/webhook-counters';
import { newId } from '../core/rules/clock';
import type { WebhookItem } from './storage/webhooks';
import { logger } from '../core/observability';
import { withRetries } from '../core/rules/dependency-errors';
import { releaseOrRetry } from './parking';
import { lateInSlotMs, noteReadMs, queueWaitSeconds, readFresh, readLeadMs, reserveSlot, sleepUntil, slotOf, stillCurrent, waitsOnQueue } from './rate-slot';

export type Gate<R = never> =
  | { go: true; release: () => Promise<void> }
  /** What the reads before the POST found (the caller's `beforePost`): no POST. */
  | { go: false; ended: R }
  | { go: false; waitSeconds: number; reason: 'rate_limit' | 'circuit'; rateSlotAt?: number; probeAt?: number; placeLease?: string }
  /** No in-flight place: the delivery waits for one (./place-wait.ts `waitForPlace`). */
  | { go: false; reason: 'max_in_flight' }
  | { go: false; disabled: true };

const spread = () => Math.floor(Math.random() * 3);
const nothing = async (): Promise<void> => undefined;
const forSlot = (slot: number) => ({ go: false as const, waitSeconds: queueWaitSeconds(slot - Date.now()), reason: 'rate_limit' as const, rateSlotAt: slot });
const contended = () => ({ go: false as const, waitSeconds: 1 + spread(), reason: 'rate_limit' as const });

/**
 * Whether a delivery may attempt now. On `go`, call `release` once the attempt ended (it gives
 * the in-flight slot back). Held back for its rate slot, the answer carries the slot
 * (`rateSlotAt`): the job carries it while it waits and passes it back as `reservedAt`.
 * `reserved.parked`: the delivery was parked (it carries its place), so it may take the probe
 * while its webhook's parked deliveries' ticket is due ({@link circuitGate}). `reserved.lease`:
 * the in-flight lease a hand-off gave it (./place-wait.ts): it goes on that one, and gives it
 * back (handed on) on every way out but `go`.
 *
 * `beforePost(postAt)` makes the caller's reads before a POST at `postAt` (its delivery record
 * again, its message): with a rate slot, they are made {@link readLeadMs} before it, beside the
 * gate's own (the in-flight lease, the webhook read again), and the gate then waits for the slot
 * and answers `go` at its time, so nothing but the request itself comes between (./rate-slot.ts).
 * A defined answer of `beforePost` stops the delivery (`ended`).
 */
export async function gate<R = never>(w: WebhookItem, reserved?: { at?: number; of?: number; parked?: boolean; lease?: string }, beforePost?: (postAt: number) => Promise<R | undefined>, now = Date.now()): Promise<Gate<R>> {
  const hand = atGate({ lease: reserved?.lease, confirmed: false });
  try {
    return await gateOn<R>(w, reserved, beforePost, now, hand);
  } finally {
    // A place handed to this delivery that it never took up is handed on to the next waiting one
    // (once taken up, it is the attempt's, given back by its `release`).
    if (hand.lease && !hand.confirmed) await releasePlaces(w, [hand.lease]);
  }
}

async function gateOn<R>(w: WebhookItem, reserved: { at?: number; of?: number; parked?: boolean } | undefined, beforePost: ((postAt: number) => Promise<R | undefined>) | undefined, now: number, hand: { lease?: string; confirmed: boolean; held?: boolean }): Promise<Gate<R>> {
  const c = w.config;
  if (w.health?.disabled_at !== undefined) return { go: false, disabled: true };
  // The circuit is open and another delivery holds its probe (as the batch read the webhook): this
  // one parks behind the probe now, without a rate slot, an in-flight place or a try at the probe.
  // Reserving a slot first sent it round the queue for the slot and only then parked it (3
  // receives instead of 2); taking a place and trying the probe cost three writes, the probe's a
  // refused conditional write (billed), for the same answer.
  const h = w.health;
  if (circuitOpen(h) && (h.probe_until ?? 0) > now) return (await disabledAtGate(w, h, now)) ? { go: false, disabled: true } : behindProbe(h, now);
  let slot: number | undefined;
  // Both limits: the place first, and only a delivery holding one reserves a slot; one that waits
  // for its slot on the queue keeps its place (`placeLease`). Slot first, a delivery handed a place
  // reserved after the backlog's slots, gave the place back to wait and went round again (./place-wait.ts).
  if (c.rate_limit && c.max_in_flight && !(await placeFirst(w, reserved, hand, now))) return circuitOpen(h) ? behindProbe(h, now) : { go: false, reason: 'max_in_flight' };
  if (c.rate_limit) {
    const taken = await slotOf(w, reserved, now);
    // Changed since the batch read it: back through the whole path, which reads it again.
    if (taken === 'changed') return { go: false, waitSeconds: 1, reason: 'rate_limit' };
    slot = taken;
    if (slot === undefined) return contended();
    if (waitsOnQueue(slot - Date.now())) {
      const kept = hand.lease === undefined ? undefined : await confirmPlace(w, hand.lease, leaseEnd(w, slot)).catch(() => undefined);
      if (kept) Object.assign(hand, { lease: kept, confirmed: true });
      return kept ? { ...forSlot(slot), placeLease: kept } : forSlot(slot);
    }
    await sleepUntil(slot - readLeadMs());
  }
  // The reads before the POST: the gate's (in-flight lease, webhook again) at once, the circuit's
  // (only while it is open), then the caller's. A lease taken is given back on every way out but `go`.
  const postAt = Math.max(slot ?? 0, Date.now());
  const readsFrom = Date.now();
  // A slot carried back from waiting is claimed (two SQS copies of the job carry it); one reserved
  // here is this job's alone.
  const carried = slot !== undefined && slot === reserved?.at;
  // A place the gate holds already ({@link placeFirst}, same lease end) is taken up as it is; one
  // handed to this delivery is confirmed (not when it lapsed, or another copy of the job took it
  // up: then it waits by its age again); else one is taken, behind the deliveries waiting, unless
  // the job carries a slot (in line by its slot).
  const takePlace = async (): Promise<string | undefined> => {
    if (hand.lease && hand.held) return Object.assign(hand, { confirmed: true }).lease;
    const mine = hand.lease ? await confirmPlace(w, hand.lease, leaseEnd(w, now)) : undefined;
    if ((hand.lease = mine)) return Object.assign(hand, { confirmed: true }).lease;
    return takeInFlightGathered(JSON.stringify([w.namespace, w.id, c.max_in_flight, leaseEnd(w, now), !carried]));
  };
  const [leased, current, claimed] = await Promise.allSettled([
    c.max_in_flight ? takePlace() : undefined,
    c.rate_limit ? stillCurrent(w, postAt) : Date.now(),
    carried ? claimRateSlot(w.namespace, w.id, slot!) : true,
  ]);
  const lease = leased.status === 'fulfilled' ? leased.value : undefined;
  // Given back, the place goes on to the oldest delivery waiting for one (./place-wait.ts).
  const release: () => Promise<void> = !lease ? nothing : () => releasePlaces(w, [lease]);
  let held: Gate<R> | Probe | undefined;
  try {
    held = await heldAtReads(w, [leased, current, claimed], lease, () => beforePost?.(postAt), now, Boolean(reserved?.parked));
  } catch (e) {
    await release();
    throw e;
  }
  const probe = held !== undefined && 'probeUntil' in held ? held : undefined;
  if (held !== undefined && !probe) {
    await release();
    return held as Gate<R>;
  }
  if (slot !== undefined) noteReadMs(Date.now() - readsFrom);
  // The reads ended more than half a slot past it (slow storage): going now could put two
  // requests closer than that. The next free slot instead, once, with no further read: waited
  // here if the queue could not bring the job back in time for its reads (a whole second at
  // least, and the lead), else on the queue, back the lead early. (The probe of an open circuit
  // goes: it is the only request while the circuit is open.)
  if (slot !== undefined && !probe && Date.now() > slot + lateInSlotMs(c.rate_limit!)) {
    if (current.status === 'fulfilled' && (current.value === false || !readFresh(current.value))) {
      // Its webhook read is old by now: the job goes back through the whole path, which reads it.
      await release();
      return { go: false, waitSeconds: 1, reason: 'rate_limit' };
    }
    slot = await reserveSlot(w).catch(async (e) => {
      await release();
      throw e;
    });
    if (slot === undefined || waitsOnQueue(slot - Date.now())) {
      await release();
      return slot === undefined ? contended() : forSlot(slot);
    }
  }
  if (slot !== undefined) {
    await sleepUntil(slot);
    // The wait itself ended more than half a slot late: the process stalled meanwhile (a busy
    // container, a long garbage collection; a 256 MB function has a fraction of a vCPU, "Lambda
    // allocates CPU power in proportion to the amount of memory configured":
    // https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html), and every job
    // whose reads were done woke at its end at once, beside the next slots' on-time requests.
    // A timer fires "as close as possible to the time specified", with no upper bound
    // (https://nodejs.org/api/timers.html#settimeoutcallback-delay-args). So the job does not go
    // in this slot (it stays unused): back through the whole path, which reserves again.
    if (!probe && Date.now() > slot + lateInSlotMs(c.rate_limit!)) {
      await release();
      return { go: false, waitSeconds: 1, reason: 'rate_limit' };
    }
  }
  // The probe's hold on the circuit was taken before its reads (and a slot's wait): if they ended
  // so late that its request could outlast the hold, another delivery could take the probe while
  // it is still open. The hold is renewed from now, while it is still this probe's; if it is not
  // (another write moved it), the probe does not go and parks behind whoever holds it. (Refusing
  // without renewing stalled the circuit: a delivery whose message load was always 1.2 s late was
  // refused at every ticket and the endpoint got no request in 40 s.)
  // The renewal's own answer may be late too (the same slow table): checked again after it.
  if (probe && Date.now() + c.timeout * 1000 + PROBE_POST_MARGIN_MS > probe.probeUntil) {
    const until = Date.now() + probe.holdMs;
    const renewed = await renewProbe(w, probe.probeUntil, until).catch(async (e) => {
      await release();
      throw e;
    });
    if (!renewed || Date.now() + c.timeout * 1000 + PROBE_POST_MARGIN_MS > until) {
      await release();
      logger.info('webhook probe not sent: its reads ended too late for its hold on the circuit, which another write moved or its renewal answered late', { namespace: w.namespace, webhook: w.name, renewed });
      const heldUntil = renewed ? until : probe.probeUntil;
      return { go: false, waitSeconds: waitSeconds(heldUntil, Date.now(), spread()), reason: 'circuit', probeAt: heldUntil };
    }
  }
  return { go: true, release };
}

/** This delivery is the open circuit's probe, which holds the circuit until `probeUntil` (a hold of `holdMs` from its take). */
type Probe = { probeUntil: number; holdMs: number };

/**
 * Between the probe's go and its request's start (the rest of the delivery's preparation), against
 * its hold: the request, with its timeout, must end inside the hold.
 */
const PROBE_POST_MARGIN_MS = 250;

/**
 * What the reads before a POST hold it back for, in the gate's order: the in-flight lease, a
 * change of the webhook, a carried slot another copy of the job claimed, the open circuit, what the caller's
 * `beforePost` found. Undefined: nothing; {@link Probe}: nothing, and this delivery is the open circuit's probe.
 */
async function heldAtReads<R>(w: WebhookItem, reads: PromiseSettledResult<unknown>[], lease: string | undefined, beforePost: () => Promise<R | undefined> | undefined, now: number, parked: boolean): Promise<Gate<R> | Probe | undefined> {
  for (const r of reads) if (r.status === 'rejected') throw r.reason;
  // No place while the circuit is open: the places are the probe's (or attempts from before the
  // run's), held for a whole timeout against an endpoint that hangs, so the delivery waits for the
  // probe, parked. Otherwise it waits for a place, handed on when an attempt ends (./place-wait.ts).
  if (w.config.max_in_flight && !lease) return circuitOpen(w.health) ? behindProbe(w.health, now) : { go: false, reason: 'max_in_flight' };
  // Changed since the read the slot was taken under: back through the whole path at once (the
  // job's next receive reads the webhook as it is now and reserves at its rate).
  if ((reads[1] as PromiseFulfilledResult<number | false>).value === false) return { go: false, waitSeconds: 1, reason: 'rate_limit' };
  // Another copy of this job claimed its slot: back through the path, which reads how that one ended.
  if ((reads[2] as PromiseFulfilledResult<boolean>).value === false) return { go: false, waitSeconds: 1, reason: 'rate_limit' };
  const circuit = circuitOpen(w.health) ? await circuitGate<R>(w, w.health, now, parked) : undefined;
  if (circuit && !('probeUntil' in circuit)) return circuit;
  const found = await beforePost();
  if (found !== undefined) return { go: false, ended: found };
  return circuit;
}

/**
 * The open circuit's part of the gate: whether health disabled the webhook (judged here, from the
 * run's start, whatever the traffic: docs/webhooks.md "Endpoint health"), or another delivery
 * holds the probe (held back until it ends); `probeUntil`: this one is the probe, holding it until then. A delivery that
 * was never parked does not take the probe while the parked deliveries' ticket is due: it goes to
 * the oldest parked one (which the ticket brings, `parked`), and the newcomer parks behind it.
 */
async function circuitGate<R>(w: WebhookItem, h: EndpointHealth, now: number, parked: boolean): Promise<Gate<R> | Probe> {
  if (await disabledAtGate(w, h, now)) return { go: false, disabled: true };
  // The hold counts from its take, not from the gate's start (a slot's wait may lie between).
  const holdMs = probeHoldMs(w.config.timeout, probeGapStep(h));
  const until = Date.now() + holdMs;
  if (await takeProbe(w, now, until, parked ? undefined : ticketDueWindow(now))) return { probeUntil: until, holdMs };
  return behindProbe(h, now);
}

/**
 * Held back behind the open circuit's probe (the caller parks it): back at the probe's end, or
 * after the gap if the probe is still in flight then (a probe that ends sooner than its timeout
 * must not keep the others waiting that long).
 */
function behindProbe(h: EndpointHealth, now: number): Gate<never> {
  const gapUntil = now + probeHoldMs(0, probeGapStep(h));
  const heldUntil = Math.max(Math.min(h.probe_until ?? 0, gapUntil), now + 1000);
  return { go: false, waitSeconds: waitSeconds(heldUntil, now, spread()), reason: 'circuit', probeAt: heldUntil };
}

/**
 * Whether the gate disabled the webhook now: its run is due ({@link dueAtGate}). Reads only when
 * the circuit is open: the namespace's thresholds (cached) if the webhook leaves one unset, and the
 * counters' last success once a disable is due. Health is a guard: a failure to judge it is logged
 * and the delivery goes on to the probe.
 */
async function disabledAtGate(w: WebhookItem, h: EndpointHealth, now: number): Promise<boolean> {
  try {
    return dueAtGate(w.config, h, now, await healthDefaultsOf(w)) && (await disableIfNoSuccess(w, h, now));
  } catch (e) {
    logger.warn('webhook health not judged at the gate', { namespace: w.namespace, webhook: w.name, error: (e as Error).message });
    return false;
  }
}

/** After an attempt that was made: a failure opens the circuit (once per run), a success closes it. */
export async function afterAttempt(w: WebhookItem, r: { ok: boolean; tooLarge?: boolean; error?: string | null; duration_ms?: number }, now = Date.now()): Promise<void> {
  try {
    if (r.ok && w.health) {
      // The run is over: what was parked behind it goes now, not when the run's probe ticket
      // comes back (up to a probe gap later, and never if a new run began meanwhile).
      const closed = await closeCircuit(w);
      if (closed?.ticket_at !== undefined) {
        await releaseOrRetry(w, closed.ticket_at, r.duration_ms).catch((e) => logger.warn('parked webhook deliveries not released at the circuit\'s close; its probe ticket releases them', { namespace: w.namespace, webhook: w.name, error: (e as Error).message }));
      }
    } else if (!r.ok && !r.tooLarge) {
      // The run's first failed attempt starts tracking it; each later one counts toward opening
      // the circuit, and a failed probe (which held the circuit for its whole timeout) lets the
      // next go after the gap.
      const opened = !w.health && (await openCircuit(w, now, r.error ?? 'failed'));
      if (!opened) await probeEnded(w, now + probeHoldMs(0, probeGapStepAfterFailure(w.health)));
    }
  } catch (e) {
    // Health is a guard: a delivery never fails (and is never POSTed again) for it.
    logger.warn('webhook health not updated after an attempt', { namespace: w.namespace, webhook: w.name, error: (e as Error).message });
  }
}

/** How long a container keeps a namespace's health defaults (an operator's change applies within it). */
const DEFAULTS_TTL_MS = 30_000;
const defaultsCache = new Map<string, { at: number; d: Promise<NamespaceHealthDefaults> }>();

/**
 * The namespace's health thresholds, read only when the webhook leaves one unset (one projected
 * GetItem per namespace and container every {@link DEFAULTS_TTL_MS}, on a final failure or at the
 * gate of an open circuit).
 */
function healthDefaultsOf(w: WebhookItem): Promise<NamespaceHealthDefaults> {
  if (w.config.failure_threshold !== undefined && w.config.disable_after !== undefined) return Promise.resolve({});
  const hit = defaultsCache.get(w.namespace);
  if (hit && Date.now() - hit.at < DEFAULTS_TTL_MS) return hit.d;
  const d = namespaceHealthDefaults(w.namespace);
  defaultsCache.set(w.namespace, { at: Date.now(), d });
  d.catch(() => defaultsCache.delete(w.namespace));
  if (defaultsCache.size > 1000) defaultsCache.delete(defaultsCache.keys().next().value!);
  return d;
}

/**
 * The disable's own publish of its `webhooks/disabled` event is tried 4 times, 0.25, 0.5 and 1 s
 * apart (1.75 s of waits, once per disable), whatever failed: the sweeper, which publishes what is
 * left, takes an event only once it is 30 s old and runs every minute, so without these tries a
 * publish that failed once (a throttled or unavailable table after the SDK's own retries) reached
 * the namespace 30 to 90 s late, and later still if the sweep's publish failed too. Every try
 * publishes the same message id; a try whose write landed but whose answer was lost may leave a
 * second copy with that id in a standard queue (at least once; ordered queues deduplicate by the
 * idempotency key).
 */
const DISABLED_EVENT_RETRIES = { tries: 4, firstDelayMs: 250 };

/**
 * After a delivery ended in failure at the receiver (its retries used up): counts it, and when
 * the rules say so disables the webhook and announces it, once.
 */
export async function afterFinalFailure(w: WebhookItem, error: string, now = Date.now()): Promise<void> {
  try {
    const h = await countFinalFailure(w, now, error);
    if (!h || h.disabled_at !== undefined || !shouldDisable(w.config, h, now, await healthDefaultsOf(w))) return;
    await disableIfNoSuccess(w, h, now);
  } catch (e) {
    logger.error('webhook health not updated after a failed delivery', { namespace: w.namespace, webhook: w.name, error: (e as Error).message });
  }
}

/**
 * Disables the webhook for the run `h` and announces it, once; true for the call that disabled it. A success closes the run only when its batch's read of the webhook
 * showed the run (afterAttempt): one whose batch read the webhook before the run began wrote
 * nothing. So before disabling, the counters say whether a success came after the run's start; if
 * one did, the failures were not in a row, and the stored run restarts after it (conditionally on
 * that run) instead. The disable is conditional on that run too: `h` may be the batch's read,
 * seconds old by now, and a re-enable or a success meanwhile ended it.
 */
async function disableIfNoSuccess(w: WebhookItem, h: EndpointHealth, now: number): Promise<boolean> {
  const success = await lastSuccessAt(w.namespace, w.id);
  if (success !== undefined && success >= h.failing_since) {
    const restarted = await restartRun(w, h.failing_since, success + 1);
    logger.info('webhook failing run restarted after a success it had not seen', { namespace: w.namespace, webhook: w.name, restarted: Boolean(restarted) });
    return false;
  }
  const event = { event_id: newId(now), payload: JSON.stringify(disabledEvent(w, { ...h, disabled_at: now })) };
  if (!(await disableForHealth(w, h.failing_since, now, event))) return false;
  logger.warn('webhook disabled by endpoint health', { namespace: w.namespace, webhook: w.name, failures: h.failures, failed_attempts: h.failed_attempts, failing_since: h.failing_since });
  await withRetries(() => publishDisabledEvent({ namespace: w.namespace, webhook_id: w.id, ...event }), DISABLED_EVENT_RETRIES).catch((e) =>
    logger.warn('webhooks/disabled event not published yet; the sweeper publishes it within about 2 minutes', { namespace: w.namespace, webhook: w.name, error: (e as Error).message }),
  );
  return true;
}

/** The message on {@link WEBHOOK_DISABLED_TOPIC} (docs/webhooks.md "Endpoint health"). */
function disabledEvent(w: Pick<WebhookItem, 'name' | 'id'>, h: { failures?: number; failed_attempts?: number; failing_since: number; disabled_at: number; last_error?: string }) {
  return {
    type: 'webhook.disabled',
    webhook: w.name,
    webhook_id: w.id,
    disabled_reason: 'health',
    disabled_at: isoTime(h.disabled_at),
    failing_since: isoTime(h.failing_since),
    failures: h.failures ?? 0,
    failed_attempts: h.failed_attempts ?? 0,
    last_error: h.last_error ?? null,
  };
}

/**
 * Publishes a pending `webhooks/disabled` event on {@link WEBHOOK_DISABLED_TOPIC}, then forgets it.
 * Called right after the disable and, for events whose publish failed, by the sweeper
 * (lambda/webhooks/sweep.ts) until it succeeds. Every try publishes the same message id (and
 * idempotency key, which ordered queues deduplicate by), so a try whose answer was lost and is made
 * again yields the same message, recognisable by its id.
 */
export async function publishDisabledEvent(e: Pick<PendingDisabledEvent, 'namespace' | 'webhook_id' | 'event_id' | 'payload'>): Promise<void> {
  const source = (JSON.parse(e.payload) as { webhook: string }).webhook;
  try {
    await publishMessages(e.namespace, WEBHOOK_DISABLED_TOPIC, [{ payload: e.payload, content_type: 'application/json', properties: { webhook_source: source } }], Date.now(), {
      messageIds: [e.event_id],
      idempotencyKey: `webhook-disabled-${e.event_id}`,
    });
  } catch (err) {
    // Nothing bound to the topic: nobody listens, and there is nothing to publish later either.
    if (!(err instanceof ApiError && err.code === 'TOPIC_NOT_FOUND')) throw err;
  }
  await eventPublished(e.namespace, e.webhook_id, e.event_id);
}
