/**
 * Per-webhook delivery limits and endpoint health: the pure rules. Storage
 * (lambda/webhooks/storage/webhook-limits.ts, webhook-health.ts) keeps the state; the delivery path
 * (lambda/webhooks/endpoint-limits.ts) asks these rules what to do.
 *
 * Health is kept on the webhook's own item (`health`), which every attempt reads anyway, and is
 * written only when it changes: the first failed attempt of a run opens the circuit, each
 * probe takes the circuit's lease, each final failure counts, and the first success after
 * failures clears it. A healthy webhook's deliveries write nothing for health.
 */

/** Defaults of the health fields (documented in docs/webhooks.md "Endpoint health"). */
export const HEALTH_DEFAULTS = {
  /** Consecutive deliveries that ended in failure (retries used up) before the webhook is disabled. */
  failure_threshold: 100,
  /** Seconds of continuous failure (no success since the first failed attempt) before it is disabled, as Svix's 5 days. */
  disable_after: 5 * 24 * 3600,
} as const;

/** The health thresholds an operator may set per namespace (`npm run admin -- webhook-health set`). */
export const HEALTH_FIELDS = ['failure_threshold', 'disable_after'] as const;
export type HealthField = (typeof HEALTH_FIELDS)[number];
/** A namespace's own health thresholds: those it sets apply to its webhooks that set none. */
export type NamespaceHealthDefaults = Partial<Record<HealthField, number>>;
/** Where a webhook's effective threshold comes from. */
export type HealthSource = 'webhook' | 'namespace' | 'default';

/**
 * A webhook's effective health thresholds: its own, else its namespace's, else {@link HEALTH_DEFAULTS}.
 * @example effectiveHealth({}, { failure_threshold: 10 }).failure_threshold // { value: 10, source: 'namespace' }
 */
export function effectiveHealth(c: NamespaceHealthDefaults, ns: NamespaceHealthDefaults = {}): Record<HealthField, { value: number; source: HealthSource }> {
  const one = (f: HealthField) =>
    c[f] !== undefined ? { value: c[f], source: 'webhook' as const } : ns[f] !== undefined ? { value: ns[f], source: 'namespace' as const } : { value: HEALTH_DEFAULTS[f], source: 'default' as const };
  return { failure_threshold: one('failure_threshold'), disable_after: one('disable_after') };
}

/** Bounds of the limit and health fields (422 outside them). */
export const LIMIT_BOUNDS = {
  rate_limit: [1, 10_000],
  max_in_flight: [1, 1000],
  failure_threshold: [1, 10_000],
  disable_after: [60, 30 * 24 * 3600],
} as const;

/** The topic a webhook disabled by health is announced on (a namespace binds a queue or webhook to it). */
export const WEBHOOK_DISABLED_TOPIC = 'webhooks/disabled';

/** The health state stored on a webhook's item; absent while healthy. */
export interface EndpointHealth {
  /** Epoch ms of the first failed attempt since the last success: the circuit is open from then. */
  failing_since: number;
  /** Deliveries that ended in failure since the last success. */
  failures?: number;
  /** Epoch ms until which the current probe holds the circuit (one attempt at a time while failing). */
  probe_until?: number;
  /** Epoch ms when health disabled the webhook: nothing is attempted until `PATCH {"enabled": true}`. */
  disabled_at?: number;
  /** The last error of the run (for the disabled event). */
  last_error?: string;
  /** Failed attempts since the last success; the circuit opens at {@link CIRCUIT_TRIP_ATTEMPTS}. */
  failed_attempts?: number;
  /** Epoch ms when the probe ticket of the parked deliveries was last sent (lambda/webhooks/parking.ts). */
  ticket_at?: number;
  /** Epoch ms until which a ticket noted but not yet confirmed sent holds the note (lambda/webhooks/storage/webhook-parked.ts). */
  ticket_unsent?: number;
  /** Epoch ms the noted ticket was sent to come back at (the probe's time): the probe is kept for it then ({@link ticketDueWindow}). */
  ticket_due?: number;
}

/**
 * Failed attempts in a row (since the last success) before the circuit opens and one probe at a
 * time goes. A breaker that opened on the first failure would hold back every delivery after one
 * transient 5xx; like the breakers of resilience libraries, it trips on a run of failures.
 */
export const CIRCUIT_TRIP_ATTEMPTS = 5;

/**
 * Whether the circuit is open (one probe at a time): health that tracks a run of at least
 * {@link CIRCUIT_TRIP_ATTEMPTS} failed attempts. Health written before the count existed is open.
 * @example circuitOpen({ failing_since: 1, failed_attempts: 2 }) // false
 */
export function circuitOpen(h: EndpointHealth | undefined): h is EndpointHealth {
  return h !== undefined && (h.failed_attempts ?? CIRCUIT_TRIP_ATTEMPTS) >= CIRCUIT_TRIP_ATTEMPTS;
}

export type WebhookStatusName = 'active' | 'failing' | 'disabled';

/**
 * What a webhook's `status` says: `disabled` with reason `user` while `enabled` is false, or
 * `health` once health disabled it; `failing` while the circuit is open; else `active`.
 * @example webhookStatusOf({ enabled: true }, { failing_since: 1 }).status // 'failing'
 */
export function webhookStatusOf(c: { enabled: boolean }, h: EndpointHealth | undefined): { status: WebhookStatusName; disabled_reason: 'user' | 'health' | null; disabled_at: number | null } {
  if (h?.disabled_at !== undefined) return { status: 'disabled', disabled_reason: 'health', disabled_at: h.disabled_at };
  if (!c.enabled) return { status: 'disabled', disabled_reason: 'user', disabled_at: null };
  // `failing` from the run's first failed attempt (the circuit may not be open yet).
  return { status: h ? 'failing' : 'active', disabled_reason: null, disabled_at: null };
}

/**
 * Whether a run of failures disables the webhook: `failures` consecutive final failures, or at
 * least one final failure after `disable_after` seconds of continuous failure. Thresholds the
 * webhook does not set come from its namespace (`ns`), else the defaults.
 * @example shouldDisable({ failure_threshold: 3 }, { failing_since: 0, failures: 3 }, 1000) // true
 */
export function shouldDisable(c: NamespaceHealthDefaults, h: Pick<EndpointHealth, 'failing_since' | 'failures'>, now: number, ns: NamespaceHealthDefaults = {}): boolean {
  const failures = h.failures ?? 0;
  if (failures < 1) return false;
  const t = effectiveHealth(c, ns);
  if (failures >= t.failure_threshold.value) return true;
  return now - h.failing_since >= t.disable_after.value * 1000;
}

/**
 * Whether a run disables the webhook, judged at the gate from the run's start (not only on a
 * delivery's final failure: while the circuit is open, deliveries wait for the one probe and few
 * ever use up their retries, so under steady traffic a dead endpoint would never be disabled).
 * `failure_threshold` deliveries in a row would have made `failure_threshold * (1 + retry_count)`
 * failed attempts with no success between them: that many failed attempts since the run began
 * disable it, as does `disable_after` seconds since the run's first failed attempt.
 * @example dueAtGate({ retry_count: 2, failure_threshold: 3 }, { failing_since: 0, failed_attempts: 9 }, 1000) // true
 */
export function dueAtGate(c: NamespaceHealthDefaults & { retry_count: number }, h: Pick<EndpointHealth, 'failing_since' | 'failed_attempts'>, now: number, ns: NamespaceHealthDefaults = {}): boolean {
  const t = effectiveHealth(c, ns);
  if ((h.failed_attempts ?? 0) >= t.failure_threshold.value * (1 + c.retry_count)) return true;
  return now - h.failing_since >= t.disable_after.value * 1000;
}

/**
 * The probe gap's exponent: failed attempts since the circuit opened (0 at the trip), so the gap
 * doubles with each failed probe.
 * @example probeGapStep({ failing_since: 1, failed_attempts: 7 }) // 2
 */
export function probeGapStep(h: EndpointHealth | undefined): number {
  return Math.max(0, (h?.failed_attempts ?? CIRCUIT_TRIP_ATTEMPTS) - CIRCUIT_TRIP_ATTEMPTS);
}

/**
 * The probe gap's exponent once one more failed attempt is counted (what the next probe waits for).
 * @example probeGapStepAfterFailure({ failing_since: 1, failed_attempts: 5 }) // 1
 */
export function probeGapStepAfterFailure(h: EndpointHealth | undefined): number {
  return probeGapStep({ failing_since: h?.failing_since ?? 0, failed_attempts: (h?.failed_attempts ?? CIRCUIT_TRIP_ATTEMPTS) + 1 });
}

/**
 * How long a probe holds the circuit: its request's timeout, then a gap that doubles with each
 * failed probe (1 s, 2 s, 4 s ... at most 60 s), so a dead endpoint sees about one
 * request per gap whatever the backlog.
 */
export function probeHoldMs(timeoutSeconds: number, failures: number): number {
  return timeoutSeconds * 1000 + Math.min(60_000, 1000 * 2 ** Math.min(failures, 6));
}

/**
 * Seconds a delivery that may not go now waits (on the queue or in the retry workflow): until
 * `untilMs`, at least 1 s, at most 900 s (SQS's largest DelaySeconds), plus `spread` seconds so
 * the waiting ones do not all come back in the same second.
 */
export function waitSeconds(untilMs: number, now: number, spread = 0): number {
  return Math.min(900, Math.max(1, Math.ceil((untilMs - now) / 1000)) + spread);
}

/**
 * While deliveries are parked, the probe goes to the oldest: their ticket brings it back at the
 * probe's time (lambda/webhooks/parking.ts), and a delivery that was never parked parks behind
 * them instead of taking the probe while the ticket is due, that is while its due time is in
 * `[now - late, now + early]`. Early: a ticket sent a moment before the probe's time for the next
 * whole second. Late: SQS delays a message by whole seconds (`DelaySeconds`), then the function's
 * poll and the ticket's reads before its gate. A ticket later than that (lost with its message, or
 * never sent) keeps the probe no more: any delivery takes it, so the circuit is never left without
 * a probe.
 * @example ticketDueWindow(60_000) // { from: 45_000, to: 65_000 }
 */
export function ticketDueWindow(now: number): { from: number; to: number } {
  return { from: now - 15_000, to: now + 5_000 };
}
