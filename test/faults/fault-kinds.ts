/**
 * What the fault injector (./injector.ts) can do to a call: the services it fails, the errors
 * each really answers with, what an outage answers, and the shapes of a seeded fault policy, a
 * latency rule, a one-shot fault and the figures it counts.
 */
export type Service = 'dynamodb' | 'sqs' | 'sfn';
export type Timing = 'before' | 'after';

export interface FaultKind {
  /** The error code (`__type`) the service answers with, or `TimeoutError` for a client timeout. */
  code: string;
  /** HTTP status of the answer; 0 for a timeout (no answer at all). */
  status: number;
  /** More fields of the answer's body, e.g. a TransactionCanceledException's `CancellationReasons`. */
  fields?: Record<string, unknown>;
}

/** Errors each service really answers with when throttled or failing. */
export const FAULT_KINDS: Record<Service, FaultKind[]> = {
  dynamodb: [
    { code: 'ProvisionedThroughputExceededException', status: 400 },
    { code: 'ThrottlingException', status: 400 },
    { code: 'InternalServerError', status: 500 },
    { code: 'ServiceUnavailable', status: 503 },
    { code: 'TimeoutError', status: 0 },
  ],
  sqs: [
    { code: 'RequestThrottled', status: 400 },
    { code: 'InternalError', status: 500 },
    { code: 'ServiceUnavailable', status: 503 },
    { code: 'TimeoutError', status: 0 },
  ],
  sfn: [
    { code: 'ThrottlingException', status: 400 },
    { code: 'ServiceUnavailable', status: 503 },
    { code: 'TimeoutError', status: 0 },
  ],
};

/** What an outage answers: mostly refusals, some timeouts of requests that were applied. */
export const OUTAGE_KINDS: { kind: FaultKind; timing: Timing }[] = [
  { kind: { code: 'ServiceUnavailable', status: 503 }, timing: 'before' },
  { kind: { code: 'InternalServerError', status: 500 }, timing: 'before' },
  { kind: { code: 'ProvisionedThroughputExceededException', status: 400 }, timing: 'before' },
  { kind: { code: 'TimeoutError', status: 0 }, timing: 'after' },
];

export interface FaultPolicy {
  /** Share of calls (per service) that are faulty, 0 to 1. */
  share: Partial<Record<Service, number>>;
  /** Of faulty calls, the share whose attempt reaches the service before the answer is lost. */
  afterShare: number;
  /** Of faulty calls, the share that fail their first attempt only (the SDK's retry absorbs them). */
  absorbedShare: number;
  /** Only these commands (e.g. `UpdateItemCommand`) are faulty; all when unset. */
  commands?: string[];
}

/** Added time on the calls that match (see ./injector.ts, "Latency"). */
export interface LatencyRule {
  service: Service;
  /** Only this command (e.g. `SendMessageBatchCommand`); every command when unset. */
  command?: string;
  /** The delay: a fixed number of ms, or [min, max) drawn from the injector's seeded source. */
  ms: number | [number, number];
  /** Share of matching calls delayed, 0 to 1; default 1. */
  share?: number;
  /** `before` the request reaches the engine (default), or `after` it was applied. */
  phase?: Timing;
  matches?: (input: Record<string, unknown>) => boolean;
  /** Holds the call before it reaches the engine until the promise this returns settles (after `ms`). */
  hold?: (input: Record<string, unknown>) => Promise<void>;
  /**
   * Where `hold` waits: `client` holds the call before it enters the SDK's stack below the
   * injector's plan, so it has not left the client (in AWS a request not yet sent holds nothing at
   * the service: the local runtime's DynamoDB transaction-conflict emulation, which tracks the
   * writes in flight, does not see it); `engine` (default) holds its first attempt just before the
   * engine, after that emulation registered it as in flight.
   */
  holdAt?: 'client' | 'engine';
}

export interface FaultStats {
  /** Calls made (client.send) while injection was on, by service. */
  calls: Record<Service, number>;
  /** Attempts failed by injection, by service, timing and code. */
  attempts: Record<string, number>;
  /** Calls that failed to the product code because of injection (after the SDK's retries), by service. */
  callsFailed: Record<Service, number>;
  /** Of those, calls whose earlier attempt was applied and whose retry then failed on its own write (e.g. ConditionalCheckFailed). */
  ownWriteConflicts: Record<Service, number>;
  /** Faulty calls the SDK's retries hid from the product code. */
  absorbed: Record<Service, number>;
  /** Calls failed to the product code, by command. */
  failedCommands: Record<string, number>;
  /** Calls made, by command. */
  commands: Record<string, number>;
}

/** A fault for the next call of one command whose input matches (targeted tests). */
export interface OneShot {
  service: Service;
  command: string;
  /** The error to answer; none with `delayMs`: a slow call that then succeeds. */
  kind?: FaultKind;
  timing: Timing;
  /** 1: the SDK's retry absorbs it; Infinity: every attempt fails. */
  attempts: number;
  /** Holds the first attempt this long before it goes to the engine. */
  delayMs?: number;
  matches?: (input: Record<string, unknown>) => boolean;
  /** Holds the call before it reaches the engine until the promise this returns settles (after `ms`). */
  hold?: (input: Record<string, unknown>) => Promise<void>;
  /**
   * Holds the call's second attempt (the SDK's first retry) before it reaches the engine until the
   * promise this returns settles: a retry slow to come (the SDK's backoff under throttling), while
   * other calls go on.
   */
  holdRetry?: () => Promise<void>;
}
