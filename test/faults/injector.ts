/**
 * Fault injection on the real AWS SDK clients, with the SDK's own mechanism: two middlewares on a
 * client's `middlewareStack`, in front of the real engines (DynamoDB Local, fauxqs, the local
 * Step Functions runner). Every attempt that is not failed reaches the engine unchanged. The faults,
 * rules and figures are declared in ./fault-kinds.ts, the answers they put on the wire in
 * ./fault-answers.ts.
 *
 * - `faultPlan` (step `initialize`, outermost) decides once per call (one `client.send`) whether
 *   the call is faulty, with which error and when, from a seeded random source, and counts the
 *   calls that the product code then sees fail.
 * - `faultInject` (step `deserialize`, priority `low`: inside the SDK's retry loop and below its
 *   deserializer) acts per attempt. It answers with the error as the service would send it (HTTP
 *   status, `__type` body, headers), so the SDK's own deserializer builds the same exception class
 *   as in AWS and its standard retry strategy classifies it as in AWS (throttling backoff,
 *   transient 5xx, the retry quota). A timeout is thrown like the Node HTTP handler throws one.
 *
 * Timing: a `before` fault answers without sending (the request never reached the service); an
 * `after` fault sends the request, lets the engine apply it, drops the real answer and returns the
 * error instead (the answer was lost: a timeout or a 5xx from a front end after the write). The
 * second kind is what at-least-once and counters must survive: the SDK retries a write that was
 * already applied (an ADD counts twice, a conditional write meets its own earlier write).
 *
 * Persistence: an `absorbed` fault fails the first attempt only, so the SDK's retry hides it from
 * the product code (unless the attempt was applied: see above); an `exhausting` fault fails every
 * attempt, so the call fails after the SDK's retries and the product code must handle it.
 *
 * An outage fails every attempt to one service while it lasts, whatever the share.
 *
 * Latency (`addLatency`): a share of the calls that match a rule wait before their first attempt
 * goes to the engine (`before`: the request is slow to arrive) or after the engine applied it
 * (`after`: the answer is slow to come back), with no error. A delay may be longer than a
 * visibility timeout, a lease or a claim: that is what it is for (the work a caller does after the
 * call then meets a world that moved on, as AWS allows: an SDK call has no upper bound on its
 * duration unless the caller sets one).
 */
import { seededRandom } from '../../local/seeded-random';
import { FAULT_KINDS, OUTAGE_KINDS, type FaultKind, type FaultPolicy, type FaultStats, type LatencyRule, type OneShot, type Service, type Timing } from './fault-kinds';
import { drain, errorResponse, isInjected, messageIdOf } from './fault-answers';

interface Plan {
  kind?: FaultKind;
  delayMs?: number;
  /** Held after the engine answered, before the answer goes back. */
  delayAfterMs?: number;
  /** Held before the first attempt reaches the engine until this settles (`LatencyRule.hold`). */
  hold?: Promise<void>;
  /** Held before the call enters the SDK's stack below the plan (`LatencyRule.holdAt` `client`). */
  holdClient?: Promise<void>;
  /** Holds the second attempt until what it returns settles (`OneShot.holdRetry`). */
  holdRetry?: () => Promise<void>;
  timing: Timing;
  /** Attempts to fail: 1 (absorbed) or all. */
  attempts: number;
  /** Attempts failed so far. */
  failed: number;
}

interface CallState {
  service: Service;
  command: string;
  plan?: Plan;
  /** Attempts of this call that failed by injection (plan or outage). */
  injected: number;
  /** Attempts of this call that reached the engine and then had their answer replaced. */
  appliedThenLost: number;
}

export { seededRandom } from '../../local/seeded-random';

const zero = (): Record<Service, number> => ({ dynamodb: 0, sqs: 0, sfn: 0 });

type MiddlewareStack = { add: (...a: never[]) => void; remove: (name: string) => boolean };

interface SerializedRequest {
  headers: Record<string, string>;
  body?: unknown;
}

export class FaultInjector {
  private readonly random: () => number;
  private policy: FaultPolicy | undefined;
  private readonly oneShots: OneShot[] = [];
  private readonly outages = new Map<Service, number>();
  private readonly latencies: LatencyRule[] = [];
  /** Calls delayed by a latency rule, and the ms added, by service and command. */
  readonly delayed: Record<string, { calls: number; ms: number }> = {};
  private readonly calls = new WeakMap<object, CallState>();
  readonly stats: FaultStats = { calls: zero(), attempts: {}, callsFailed: zero(), ownWriteConflicts: zero(), absorbed: zero(), failedCommands: {}, commands: {} };
  /**
   * SQS copies per message: every SendMessageBatch attempt that reached fauxqs stored its entries,
   * so an applied attempt whose answer was lost, then retried, leaves two SQS messages of one
   * service message (what SQS standard queues may hand to two consumers). Keyed by queue URL and
   * message id: 1 for a message stored, plus one for each later store of it once a store's answer
   * was lost (the SDK's retry, or the caller's own send after the SDK gave up: the service cannot
   * tell either from a first send). Sends the service makes on purpose after an answered store (a
   * webhook job sent again after a hand-off or a deferral, the earlier one deleted) are not
   * copies: counting every send made the simulation excuse a second POST of such a job.
   */
  readonly sqsCopies = new Map<string, number>();
  /** Messages (queue URL and id) one of whose stores had its answer lost: what is stored after is a copy. */
  private readonly lostStores = new Set<string>();

  constructor(readonly seed: number) {
    this.random = seededRandom(seed);
  }

  /** Turns injection on with `policy`, or off with undefined (setup and verification run clean). */
  set(policy: FaultPolicy | undefined) {
    this.policy = policy;
  }

  get enabled() {
    return this.policy !== undefined || this.oneShots.length > 0 || this.latencies.length > 0;
  }

  /** Adds a latency rule (kept until `clearLatency`). */
  addLatency(rule: LatencyRule) {
    this.latencies.push(rule);
  }

  /** Drops one latency rule (a step's slow storage ends with the step). */
  removeLatency(rule: LatencyRule) {
    const i = this.latencies.indexOf(rule);
    if (i >= 0) this.latencies.splice(i, 1);
  }

  /** Drops every latency rule (a drain or a verification runs at the engines' own speed). */
  clearLatency() {
    this.latencies.length = 0;
  }

  /** Adds the delay of the first latency rule that matches this call to its plan. */
  private withLatency(service: Service, command: string, input: unknown, plan: Plan | undefined): Plan | undefined {
    for (const r of this.latencies) {
      if (r.service !== service || (r.command && r.command !== command)) continue;
      if (r.matches && !r.matches((input ?? {}) as Record<string, unknown>)) continue;
      if (this.random() >= (r.share ?? 1)) continue;
      const ms = typeof r.ms === 'number' ? r.ms : r.ms[0] + this.random() * (r.ms[1] - r.ms[0]);
      const p: Plan = plan ?? { timing: 'before', attempts: 0, failed: 0 };
      if (r.phase === 'after') p.delayAfterMs = ms;
      else p.delayMs = (p.delayMs ?? 0) + ms;
      if (r.hold) p[r.holdAt === 'client' ? 'holdClient' : 'hold'] = r.hold((input ?? {}) as Record<string, unknown>);
      const k = `${service} ${command}`;
      const d = (this.delayed[k] ??= { calls: 0, ms: 0 });
      d.calls++;
      d.ms += Math.round(ms);
      return p;
    }
    return plan;
  }

  /** Fails the next call of `o.command` whose input matches, once. */
  failNext(o: OneShot) {
    this.oneShots.push(o);
  }

  /** Drops the one-shot faults not yet used (a test's faults end with it). */
  clearOneShots() {
    this.oneShots.length = 0;
  }

  /** One-shot faults not yet used. */
  get unused() {
    return this.oneShots.length;
  }

  private takeOneShot(service: Service, command: string, input: unknown): Plan | undefined {
    const i = this.oneShots.findIndex((o) => o.service === service && o.command === command && (!o.matches || o.matches(input as Record<string, unknown>)));
    if (i < 0) return undefined;
    const [o] = this.oneShots.splice(i, 1);
    return { kind: o.kind, delayMs: o.delayMs, holdRetry: o.holdRetry, timing: o.timing, attempts: o.attempts, failed: 0 };
  }

  /** Fails every attempt to `service` for `ms` from now. */
  outage(service: Service, ms: number) {
    this.outages.set(service, Date.now() + ms);
  }

  private inOutage(service: Service) {
    return (this.outages.get(service) ?? 0) > Date.now();
  }

  private pick<T>(items: T[]): T {
    return items[Math.floor(this.random() * items.length)];
  }

  private plan(service: Service, command: string): Plan | undefined {
    const p = this.policy;
    if (!p || this.random() >= (p.share[service] ?? 0)) return undefined;
    if (p.commands && !p.commands.includes(command)) return undefined;
    return {
      kind: this.pick(FAULT_KINDS[service]),
      timing: this.random() < p.afterShare ? 'after' : 'before',
      attempts: this.random() < p.absorbedShare ? 1 : Number.POSITIVE_INFINITY,
      failed: 0,
    };
  }

  /** Adds the two middlewares to a client (once). */
  attach(client: { middlewareStack: unknown }, service: Service) {
    const stack = client.middlewareStack as MiddlewareStack;
    stack.remove('faultPlan');
    stack.remove('faultInject');
    stack.remove('faultHoldRetry');
    const plan = (next: (a: unknown) => Promise<unknown>, context: { commandName?: string }) => async (args: { input?: unknown }) => {
      if (!this.enabled && !this.inOutage(service)) return next(args);
      const command = context.commandName ?? '?';
      const planned = this.takeOneShot(service, command, args.input) ?? this.plan(service, command);
      const call: CallState = { service, command, plan: this.withLatency(service, command, args.input, planned), injected: 0, appliedThenLost: 0 };
      this.calls.set(context, call);
      this.stats.calls[service]++;
      this.stats.commands[command] = (this.stats.commands[command] ?? 0) + 1;
      try {
        if (call.plan?.holdClient) await call.plan.holdClient;
        const out = await next(args);
        if (call.injected > 0) this.stats.absorbed[service]++;
        return out;
      } catch (e) {
        if (call.injected > 0) {
          this.stats.callsFailed[service]++;
          this.stats.failedCommands[command] = (this.stats.failedCommands[command] ?? 0) + 1;
          // The last attempt failed on the engine's own answer after an earlier one was applied.
          if (call.appliedThenLost > 0 && !isInjected(e)) this.stats.ownWriteConflicts[service]++;
        }
        throw e;
      }
    };
    const inject = (next: (a: { request: unknown }) => Promise<{ response: unknown }>, context: object) => async (args: { request: unknown }) => {
      const call = this.calls.get(context);
      if (!call) return next(args);
      let fault: { kind: FaultKind; timing: Timing } | undefined;
      if (call.plan?.delayMs) {
        const ms = call.plan.delayMs;
        call.plan.delayMs = undefined;
        await new Promise((r) => setTimeout(r, ms));
      }
      if (call.plan?.hold) {
        const held = call.plan.hold;
        call.plan.hold = undefined;
        await held;
      }
      if (this.inOutage(service)) fault = this.pick(OUTAGE_KINDS);
      else if (call.plan?.kind && call.plan.failed < call.plan.attempts) {
        call.plan.failed++;
        fault = { kind: call.plan.kind, timing: call.plan.timing };
      }
      if (!fault) {
        const out = this.observe(call, args, await next(args));
        if (call.plan?.delayAfterMs) {
          const ms = call.plan.delayAfterMs;
          call.plan.delayAfterMs = undefined;
          await new Promise((r) => setTimeout(r, ms));
        }
        return out;
      }
      call.injected++;
      const key = `${service} ${fault.timing} ${fault.kind.code}`;
      this.stats.attempts[key] = (this.stats.attempts[key] ?? 0) + 1;
      if (fault.timing === 'after') {
        const real = this.observe(call, args, await next(args), true);
        await drain((real.response as { body?: unknown }).body);
        call.appliedThenLost++;
      }
      if (fault.kind.status === 0) throw Object.assign(new Error(`injected: connection timed out (${call.command})`), { name: 'TimeoutError', injected: true });
      return { response: errorResponse(service, fault.kind) };
    };
    stack.add(plan as never, { step: 'initialize', priority: 'high', name: 'faultPlan' } as never);
    stack.add(inject as never, { step: 'deserialize', priority: 'low', name: 'faultInject' } as never);
    // A retry held back is one the SDK has not sent yet (its backoff): held inside the SDK's retry
    // loop but before every per-attempt layer, the local engines' emulations included, so it holds
    // no item as a request in flight would.
    const holdRetry = (next: (a: unknown) => Promise<unknown>, context: object) => async (args: unknown) => {
      const call = this.calls.get(context);
      if (call?.plan?.holdRetry && call.injected > 0) {
        const held = call.plan.holdRetry;
        call.plan.holdRetry = undefined;
        await held();
      }
      return next(args);
    };
    stack.add(holdRetry as never, { step: 'finalizeRequest', priority: 'low', name: 'faultHoldRetry' } as never);
  }

  /** Counts the SQS copies an applied SendMessageBatch attempt stored; `lost`: its answer is replaced. */
  private observe(call: CallState, args: { request: unknown }, out: { response: unknown }, lost = false) {
    const status = (out.response as { statusCode?: number }).statusCode ?? 0;
    if (call.command === 'SendMessageBatchCommand' && status >= 200 && status < 300) {
      const body = (args.request as SerializedRequest).body;
      try {
        const input = JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body as Uint8Array)) as { QueueUrl: string; Entries: { MessageBody: string }[] };
        for (const e of input.Entries) {
          const id = messageIdOf(e.MessageBody);
          if (!id) continue;
          const key = `${input.QueueUrl} ${id}`;
          if (!this.sqsCopies.has(key) || this.lostStores.has(key)) this.sqsCopies.set(key, (this.sqsCopies.get(key) ?? 0) + 1);
          if (lost) this.lostStores.add(key);
        }
      } catch {
        // Not JSON: nothing to count.
      }
    }
    return out;
  }

  /** SQS copies of a service message in the queue at `url` (1 when never sent twice). */
  copiesOf(url: string, messageId: string) {
    return Math.max(1, this.sqsCopies.get(`${url} ${messageId}`) ?? 1);
  }

  /** Injected attempts in all. */
  get attemptsFailed() {
    return Object.values(this.stats.attempts).reduce((a, b) => a + b, 0);
  }
}
