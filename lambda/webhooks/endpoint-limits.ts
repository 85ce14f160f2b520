/**
 * Per-webhook delivery limits and endpoint health on the delivery path (issue 22 items 1-4):
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
import { randomUUID } from 'node:crypto';
import { circuitOpen, dueAtGate, type EndpointHealth, type NamespaceHealthDefaults, probeGapStep, probeGapStepAfterFailure, probeHoldMs, shouldDisable, waitSeconds, WEBHOOK_DISABLED_TOPIC } from '../domain/endpoint-health';
import { ApiError } from '../domain/errors';
import { isoTime } from '../domain/envelope';
import { publishMessages } from '../publishing/publish';
import { releaseInFlight, reserveRateSlots, takeInFlight } from '../storage/webhook-limits';
import { closeCircuit, countFinalFailure, disableForHealth, eventPublished, openCircuit, probeEnded, restartRun, takeProbe, namespaceHealthDefaults, type PendingDisabledEvent } from '../storage/webhook-health';
import { lastSuccessAt } from '../storage/webhook-counters';
import { newId } from '../domain/clock';
import { getWebhook, webhookReadAt, type WebhookItem } from '../storage/webhooks';
import { logger } from '../observability';
import { withRetries } from '../domain/dependency-errors';
import { releaseParked } from './parking';

export type Gate =
  /** `waited`: the gate waited for the job's rate slot (the caller reads its record again before POSTing). */
  | { go: true; release: () => Promise<void>; waited: boolean }
  | { go: false; waitSeconds: number; reason: 'rate_limit' | 'max_in_flight' | 'circuit'; rateSlotAt?: number; probeAt?: number }
  | { go: false; disabled: true };

/** How long the takes of one container gather before one storage call. */
const GATHER_MS = 5;

/** Takes gathered per key: each waiter gets its place in arrival order. */
function gatherer<R>(run: (key: string, n: number) => Promise<R[]>) {
  const pending = new Map<string, { resolve: (r: R) => void; reject: (e: unknown) => void }[]>();
  return (key: string): Promise<R> =>
    new Promise<R>((resolve, reject) => {
      let waiters = pending.get(key);
      if (!waiters) {
        waiters = [];
        pending.set(key, waiters);
        setTimeout(() => {
          const ws = pending.get(key) ?? [];
          pending.delete(key);
          run(key, ws.length).then(
            (rs) => ws.forEach((w, i) => w.resolve(rs[i])),
            (e) => ws.forEach((w) => w.reject(e)),
          );
        }, GATHER_MS);
      }
      waiters.push({ resolve, reject });
    });
}

/** Per key and rate: the slots reserved for a gathered group, one per waiter in arrival order (none: contended). */
const reserveGathered = gatherer<number | undefined>(async (key, n) => {
  const [ns, id, rate, of] = JSON.parse(key) as [string, string, number, number];
  const times = await reserveRateSlots(ns, id, rate, n, of);
  return Array.from({ length: n }, (_, i) => times[i]);
});

/**
 * A job whose slot is further ahead than {@link WAIT_HERE_MS} waits on SQS, never in the function:
 * it goes back to the queue as a new message carrying its slot, delayed by whole seconds (SQS
 * `DelaySeconds`, 0 to 900 s:
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-timers.html)
 * so that it becomes visible {@link BACK_EARLY_MS} to 1.5 s before its slot: received again (a
 * receive, an admission and a read take time, more when the event source is busy), it is not late
 * for it (a job back after its slot reserves another, and its slot goes unused). Only what a
 * delay cannot express, under 1.5 s, is waited here, once per slot.
 * (Not a batch item failure with a changed visibility: that receive would count toward the
 * redrive policy's `maxReceiveCount`, so a job that waited a few slots would end in the DLQ, and
 * the message's body could not carry the slot it reserved, so it would reserve again on each
 * receive, a loop: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html.)
 */
const BACK_EARLY_MS = 500;
const WAIT_HERE_MS = 1000 + BACK_EARLY_MS;

/**
 * How late a job back from the queue may still go in its slot: half the slots' spacing. Requests
 * at most that late after their slots, which are 1/rate apart, still put at most `rate_limit` + 1
 * in any second (the slots of a window widened by half a spacing), the bound on-time slots keep at
 * a window's edges; and a job the event source received a little late (busy pollers, slow calls)
 * keeps its slot instead of leaving it unused and reserving one at the end of the backlog.
 */
const lateInSlotMs = (rate: number) => 500 / rate;

/** Per key, max and expiry: the in-flight leases taken for a gathered group (undefined: none left). */
const takeInFlightGathered = gatherer<string | undefined>(async (key, n) => {
  const [ns, id, max, expiresAt] = JSON.parse(key) as [string, string, number, number];
  const ids = Array.from({ length: n }, () => randomUUID());
  const taken = new Set(await takeInFlight(ns, id, max, ids, expiresAt));
  return ids.map((l) => (taken.has(l) ? l : undefined));
});

const spread = () => Math.floor(Math.random() * 3);
const nothing = async (): Promise<void> => undefined;

/**
 * Whether a delivery may attempt now. On `go`, call `release` once the attempt ended (it gives
 * the in-flight slot back). Held back for its rate slot, the answer carries the slot
 * (`rateSlotAt`): the job carries it while it waits and passes it back as `reservedAt`.
 */
export async function gate(w: WebhookItem, reserved?: { at?: number; of?: number }, now = Date.now()): Promise<Gate> {
  const c = w.config;
  let waited = false;
  if (w.health?.disabled_at !== undefined) return { go: false, disabled: true };
  if (c.rate_limit) {
    // A job back from waiting for its slot goes in it if the slot is not more than half a slot
    // past ({@link lateInSlotMs}) and was reserved under the configuration in force; any other
    // reserves the next free slot: a job back too late (going now could put two requests closer
    // than half of 1/rate), and a job whose slot was numbered before a change of the webhook (a
    // lowered `rate_limit` applies to the slots already reserved, not only to new ones; the first
    // reservation at the new rate numbers the slots again from now, ./storage/webhook-limits.ts).
    const at = reserved?.at;
    const current = at !== undefined && at >= now - lateInSlotMs(c.rate_limit) && reserved?.of === w.updated_at;
    const slot = current ? at : await reserveGathered(JSON.stringify([w.namespace, w.id, c.rate_limit, w.updated_at]));
    // No slot (other takes kept renumbering): waits like a held job and reserves on its way back.
    if (slot === undefined) return { go: false, waitSeconds: 1 + spread(), reason: 'rate_limit' };
    const ahead = slot - Date.now();
    if (ahead > WAIT_HERE_MS) return { go: false, waitSeconds: Math.max(1, Math.floor((ahead - BACK_EARLY_MS) / 1000)), reason: 'rate_limit', rateSlotAt: slot };
    if (ahead > 0) {
      await new Promise((r) => setTimeout(r, ahead));
      waited = true;
    }
  }
  let release: () => Promise<void> = nothing;
  if (c.max_in_flight) {
    // The lease outlives the request's timeout by a margin; a crashed container's lease lapses then.
    const expiresAt = Math.ceil((now + c.timeout * 1000 + 15_000) / 1000) * 1000;
    const lease = await takeInFlightGathered(JSON.stringify([w.namespace, w.id, c.max_in_flight, expiresAt]));
    if (!lease) return { go: false, waitSeconds: 1 + spread(), reason: 'max_in_flight' };
    release = () => releaseInFlight(w.namespace, w.id, [lease]).catch((e) => logger.warn('webhook in-flight slot not given back; it lapses with its lease', { namespace: w.namespace, webhook: w.name, error: (e as Error).message }));
  }
  if (c.rate_limit && !(await stillCurrent(w))) {
    // Changed since the read the slot was taken under: back through the whole path at once (the
    // job's next receive reads the webhook as it is now and reserves at its rate).
    await release();
    return { go: false, waitSeconds: 1, reason: 'rate_limit' };
  }
  if (circuitOpen(w.health)) {
    // Judged here, from the run's start, whatever the traffic (docs/webhooks.md "Endpoint health").
    if (await disabledAtGate(w, w.health, now)) {
      await release();
      return { go: false, disabled: true };
    }
    const until = now + probeHoldMs(c.timeout, probeGapStep(w.health));
    if (!(await takeProbe(w, now, until))) {
      await release();
      // Back at the probe's end, or after the gap if the probe is still in flight then (a probe
      // that ends sooner than its timeout must not keep the others waiting that long).
      const gapUntil = now + probeHoldMs(0, probeGapStep(w.health));
      const heldUntil = Math.max(Math.min(w.health.probe_until ?? 0, gapUntil), now + 1000);
      return { go: false, waitSeconds: waitSeconds(heldUntil, now, spread()), reason: 'circuit', probeAt: heldUntil };
    }
  }
  return { go: true, release, waited };
}

/**
 * How old the webhook read a rate-limited attempt goes on may be. A job reads its webhook when its
 * batch starts, then may wait here for its slot (up to {@link WAIT_HERE_MS}) or meet slow storage
 * calls: a `rate_limit` changed meanwhile would not apply to its POST. So once its read is older
 * than this, it reads again just before the POST (a strongly consistent GetItem, only for jobs
 * that waited or met slow calls), and a change sends it back through the whole path.
 */
const FRESH_READ_MS = 1000;

/**
 * Whether the webhook is still as `w` shows it, by a read started at most {@link FRESH_READ_MS}
 * ago (a read whose answer is slow to come back is made again, a few times).
 */
async function stillCurrent(w: WebhookItem): Promise<boolean> {
  let since = webhookReadAt(w) ?? 0;
  for (let i = 0; i < 3; i++) {
    if (Date.now() - since <= FRESH_READ_MS) return true;
    since = Date.now();
    const now = await getWebhook(w.namespace, w.name);
    if (!now || now.id !== w.id || now.updated_at !== w.updated_at) return false;
  }
  return Date.now() - since <= FRESH_READ_MS;
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
export async function afterAttempt(w: WebhookItem, r: { ok: boolean; tooLarge?: boolean; error?: string | null }, now = Date.now()): Promise<void> {
  try {
    if (r.ok && w.health) {
      // The run is over: what was parked behind it goes now, not when the run's probe ticket
      // comes back (up to a probe gap later, and never if a new run began meanwhile).
      const closed = await closeCircuit(w);
      if (closed?.ticket_at !== undefined) {
        await releaseParked(w).catch((e) => logger.warn('parked webhook deliveries not released at the circuit\'s close; its probe ticket releases them', { namespace: w.namespace, webhook: w.name, error: (e as Error).message }));
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
 * that run) instead.
 */
async function disableIfNoSuccess(w: WebhookItem, h: EndpointHealth, now: number): Promise<boolean> {
  const success = await lastSuccessAt(w.namespace, w.id);
  if (success !== undefined && success >= h.failing_since) {
    const restarted = await restartRun(w, h.failing_since, success + 1);
    logger.info('webhook failing run restarted after a success it had not seen', { namespace: w.namespace, webhook: w.name, restarted: Boolean(restarted) });
    return false;
  }
  const event = { event_id: newId(now), payload: JSON.stringify(disabledEvent(w, { ...h, disabled_at: now })) };
  if (!(await disableForHealth(w, now, event))) return false;
  logger.warn('webhook disabled by endpoint health', { namespace: w.namespace, webhook: w.name, failures: h.failures, failed_attempts: h.failed_attempts, failing_since: h.failing_since });
  await withRetries(() => publishDisabledEvent({ namespace: w.namespace, webhook_id: w.id, ...event }), DISABLED_EVENT_RETRIES).catch((e) =>
    logger.warn('webhooks/disabled event not published yet; the sweeper publishes it within about 2 minutes', { namespace: w.namespace, webhook: w.name, error: (e as Error).message }),
  );
  return true;
}

/** The message on {@link WEBHOOK_DISABLED_TOPIC} (docs/webhooks.md "Endpoint health"). */
export function disabledEvent(w: Pick<WebhookItem, 'name' | 'id'>, h: { failures?: number; failed_attempts?: number; failing_since: number; disabled_at: number; last_error?: string }) {
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
 * (lambda/sweeper/webhooks.ts) until it succeeds. Every try publishes the same message id (and
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
