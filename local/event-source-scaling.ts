/**
 * How the local event source (./event-source.ts) grows and shrinks as Lambda's SQS event source
 * mapping does, and what an added invocation costs: the pollers' scaling and the execution
 * environments they run in.
 *
 * - Scaling: "When messages are available, Lambda starts processing five batches at a time with
 *   five concurrent invocations of your function. If messages are still available, Lambda
 *   increases the number of processes that are reading batches by up to 300 more instances per
 *   minute", up to the mapping's maximum concurrency, and "when traffic is low, Lambda scales back
 *   the processing to five concurrent batches"
 *   (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html). AWS does not say how
 *   fast it scales back; here a poller beyond `initial` that found nothing for `idleMs` stops.
 * - Errors: "If your function code caused the error ... Lambda gradually backs off, reducing the
 *   amount of concurrency allocated to your Amazon SQS event source mapping"
 *   (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html, "Backoff
 *   strategy for failed invocations"): after a failed invocation no poller is added for
 *   `errorBackoffMs`, and a poller beyond `initial` whose invocation failed stops.
 * - Environments: an invocation runs in an idle warm execution environment, or Lambda first
 *   prepares a new one (download, runtime start, the function's initialization: "Cold starts and
 *   latency", https://docs.aws.amazon.com/lambda/latest/operatorguide/execution-environments.html).
 *   So a batch that finds no idle environment warmed within `keepWarmMs` waits `coldStartMs`
 *   first, and a scale-up pays one cold start per added invocation.
 */

export interface PollerScaling {
  /** Pollers at the start and after scaling back. */
  initial: number;
  /** Pollers added a minute at most while messages wait: one each `60_000 / perMinute` ms at most. */
  perMinute: number;
  /** A poller beyond `initial` that found nothing this long stops (ms). */
  idleMs: number;
  /** No poller is added this long after a failed invocation (ms). */
  errorBackoffMs: number;
  /** A new execution environment's start before its first batch (ms). */
  coldStartMs: number;
  /** An idle environment stays warm this long (ms). */
  keepWarmMs: number;
}

/**
 * The delivery queue's mapping (a standard queue with a maximum concurrency): five batches at
 * first, up to 300 more a minute (AWS's figures, above). This runtime's choices where AWS gives no
 * figure: the scale-back after 10 s without a message, no scale-up for 10 s after a failed
 * invocation, environments kept warm 5 minutes (AWS reclaims idle ones after an unstated time),
 * and a cold start of 300 ms: a Powertools and AWS SDK handler reported an `Init Duration` of
 * 304 ms at 128 MB (https://kkloudtarus.net/en/blog/lambda-cold-start-optimization); the delivery
 * function has 512 MB and its bundle imports in about 60 ms (docs/performance.md, cold-start
 * table), so 300 ms is on the harsh side.
 */
export const SQS_MAPPING_SCALING: PollerScaling = { initial: 5, perMinute: 300, idleMs: 10_000, errorBackoffMs: 10_000, coldStartMs: 300, keepWarmMs: 5 * 60_000 };

/** What the scaler looks at, each step. */
interface ScalingState {
  /** The scaler's clock (`Date.now()`), also the time of the step it records. */
  now: number;
  /** When a poller was last added (the start, for the initial ones). */
  lastAddedAt: number;
  /** Pollers running. */
  running: number;
  /** The mapping's maximum concurrency. */
  max: number;
  /** Batches being handled. */
  busy: number;
  /** Messages read ahead, waiting for a poller. */
  waiting: number;
  /** When an invocation last failed (0: never). */
  lastErrorAt: number;
}

/**
 * Whether the scaler adds a poller at this step: below the maximum concurrency, messages still
 * waiting, every poller busy, no recent failure, and a `60_000 / perMinute` ms since the last one
 * added, so that any minute adds `perMinute` at most, on the clock that records the step.
 */
function addsPoller(s: ScalingState, sc: PollerScaling): boolean {
  const due = s.now - s.lastAddedAt >= 60_000 / sc.perMinute;
  return due && s.running < s.max && s.waiting > 0 && s.busy >= s.running && !(s.lastErrorAt && s.now - s.lastErrorAt < sc.errorBackoffMs);
}

/** One change of the pollers: when it was taken (the scaler's clock) and how many run after it. */
export interface ScalingStep {
  readonly at: number;
  readonly pollers: number;
}

/**
 * The pollers' last changes, oldest first, written when each is taken (a poller added, at the
 * start or by the scaler; a poller stopped, idle, failed or at the end), so a test or the bench
 * judges the scaling on the times it used, not on when an outside timer happened to look.
 */
export class ScalingSteps {
  private readonly list: ScalingStep[] = [];
  /** When a poller was last added (0: never). */
  lastAddedAt = 0;

  constructor(private readonly keep = 1000) {}

  added(at: number, pollers: number): void {
    this.lastAddedAt = at;
    this.note(at, pollers);
  }

  note(at: number, pollers: number): void {
    this.list.push({ at, pollers });
    if (this.list.length > this.keep) this.list.shift();
  }

  get steps(): readonly ScalingStep[] {
    return this.list;
  }
}

/**
 * Runs the scaler: looks eight times a step and adds a poller when `addsPoller` says so, recorded
 * at the time the rule was given. The rule keeps the pace, so a timer firing early or late adds
 * none too soon, and an addition comes an eighth of a step after it is due at most (on a machine
 * that keeps its timers). `look`: the event source's state but the clock and the last addition.
 */
export function runScaler(sc: PollerScaling, steps: ScalingSteps, look: () => Omit<ScalingState, 'now' | 'lastAddedAt'>, add: (at: number) => void): NodeJS.Timeout {
  const timer = setInterval(() => {
    const state = { ...look(), now: Date.now(), lastAddedAt: steps.lastAddedAt };
    if (addsPoller(state, sc)) add(state.now);
  }, 7_500 / sc.perMinute);
  timer.unref();
  return timer;
}

/** The mapping's execution environments: idle warm ones, most recently used last. */
export class Environments {
  private idle: number[] = [];

  constructor(private readonly sc: Pick<PollerScaling, 'coldStartMs' | 'keepWarmMs'>) {}

  /** Takes an environment for a batch: how long it takes to be ready (0 when a warm one was idle). */
  take(now: number): number {
    this.idle = this.idle.filter((at) => now - at < this.sc.keepWarmMs);
    if (this.idle.length) {
      this.idle.pop();
      return 0;
    }
    return this.sc.coldStartMs;
  }

  /** Gives an environment back when its batch ends. */
  give(now: number): void {
    this.idle.push(now);
  }
}
