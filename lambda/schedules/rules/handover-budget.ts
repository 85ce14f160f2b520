/**
 * What the tick holds in memory while it hands held messages over, bounded by bytes rather than by
 * count: 32 shards of 100-key pages in parallel is 3,200 messages, which at 256 KiB each would be
 * 800 MiB in a function of 256 MB. Each part of a page holds its messages' weight of one budget
 * per tick until its sends are done; a part waits while the budget is spent.
 */

const MIB = 1024 * 1024;

/**
 * The tick's budget of message bytes in flight (by {@link inFlightWeight}): a quarter of the
 * scheduler function's 256 MB (lib/constructs/functions.ts), leaving the rest to the runtime, the
 * SDK clients and the garbage not yet collected.
 */
export const IN_FLIGHT_BYTES = 64 * MIB;

/** Fixed bytes per message besides its payload: its attributes, ids and the SDK's framing. */
const PER_MESSAGE_BYTES = 2048;

/**
 * A held message's weight while it is handed over: copies of its payload alive at once, namely the
 * BatchGetItem answer and its parsed item, then per target the encoded body and the send request.
 */
export function inFlightWeight(item: { size?: number; targets?: unknown[]; slots?: number }): number {
  const targets = Math.max(1, item.targets?.length ?? 1);
  // A pack (lambda/schedules/storage/held-packs.ts): its messages' bytes in `size`, and the fixed bytes of each.
  return ((item.size ?? 0) + PER_MESSAGE_BYTES * Math.max(1, item.slots ?? 1)) * (2 + 2 * targets);
}

/**
 * The items reordered so that namespaces take turns (their first items, then their second ones,
 * ...), each namespace's own order kept: within a page, oldest first per namespace.
 */
export function byNamespaceTurns<T extends { namespace: string }>(items: T[]): T[] {
  const queues = new Map<string, T[]>();
  for (const i of items) queues.set(i.namespace, [...(queues.get(i.namespace) ?? []), i]);
  const out: T[] = [];
  for (let turn = 0; out.length < items.length; turn++) for (const q of queues.values()) if (turn < q.length) out.push(q[turn]);
  return out;
}

/** A byte budget shared by the tick's parallel work, first come first served. */
export class ByteBudget {
  private used = 0;
  private waiting: { bytes: number; go: () => void }[] = [];
  /** The most bytes held at once. */
  peak = 0;

  constructor(readonly capacity: number) {}

  /**
   * `items` cut, in order, into parts of at most a quarter of the budget each (so a few parts of
   * different shards go at once); one item heavier than that is a part of its own.
   */
  parts<T>(items: T[], weight: (item: T) => number): { items: T[]; weight: number }[] {
    const most = Math.max(1, Math.floor(this.capacity / 4));
    const out: { items: T[]; weight: number }[] = [];
    for (const item of items) {
      const w = weight(item);
      const last = out[out.length - 1];
      if (last && last.weight + w <= most) {
        last.items.push(item);
        last.weight += w;
      } else out.push({ items: [item], weight: w });
    }
    return out;
  }

  /** Runs `fn` holding `bytes` of the budget (a part heavier than the whole budget waits until nothing else is held). */
  async holding<T>(bytes: number, fn: () => Promise<T>): Promise<T> {
    const take = Math.min(bytes, this.capacity);
    await this.acquire(take);
    try {
      return await fn();
    } finally {
      this.release(take);
    }
  }

  private acquire(bytes: number): Promise<void> {
    if (!this.waiting.length && this.used + bytes <= this.capacity) {
      this.take(bytes);
      return Promise.resolve();
    }
    return new Promise((go) => this.waiting.push({ bytes, go: () => go() }));
  }

  private take(bytes: number) {
    this.used += bytes;
    this.peak = Math.max(this.peak, this.used);
  }

  private release(bytes: number) {
    this.used -= bytes;
    while (this.waiting.length && this.used + this.waiting[0].bytes <= this.capacity) {
      const next = this.waiting.shift() as { bytes: number; go: () => void };
      this.take(next.bytes);
      next.go();
    }
  }
}

/** Handovers a second assumed before the tick has measured its own (about 0.145 vCPU at 256 MB: docs/design/0015). */
const PRIOR_RATE_PER_S = 100;
/**
 * Seconds of work at the measured rate that may be in flight at once, deadline or not. More in
 * flight does not hand over faster (the tick's CPU and sockets are the bound), it only makes each
 * page wait longer for its finish, and the rate is measured from finishes: a first tick that
 * admitted a whole deadline's worth at the assumed rate at once (4,500) took 55 s to finish them.
 */
const HORIZON_S = 5;

/**
 * Bounds the messages claimed and not yet finished by what the tick can finish before its deadline:
 * a page is admitted only for as many messages as the rate measured so far (finished handovers a
 * second) ends in the time left, and at most {@link HORIZON_S} seconds' worth, so a tick cut off at its deadline (Lambda's timeout, less the
 * handler's margin) leaves no claims behind to expire and be sent again. A shard that finds no
 * room waits for other pages to finish; none is admitted once even one would end past the deadline.
 */
export class ClaimGate {
  private inFlight = 0;
  private finished = 0;
  private readonly started: number;
  private waiting: (() => void)[] = [];

  constructor(
    private readonly deadline: number,
    private readonly now: () => number = Date.now,
  ) {
    this.started = now();
  }

  /** Handovers a second: measured once some have finished, assumed before. */
  rate(): number {
    const elapsed = this.now() - this.started;
    return this.finished > 0 && elapsed > 0 ? Math.max(1, (this.finished * 1000) / elapsed) : PRIOR_RATE_PER_S;
  }

  /** How many more may be claimed now (0 when none would finish in time). */
  room(): number {
    const left = this.deadline - this.now();
    if (left <= 0) return 0;
    return Math.max(0, Math.floor((this.rate() * Math.min(left, HORIZON_S * 1000)) / 1000) - this.inFlight);
  }

  /**
   * Admits up to `most` messages, waiting while others are in flight and there is no room; 0 when
   * the deadline leaves room for none.
   */
  async admit(most: number): Promise<number> {
    for (;;) {
      const n = Math.min(most, this.room());
      if (n > 0) {
        this.inFlight += n;
        return n;
      }
      if (this.inFlight === 0 || this.now() >= this.deadline) return 0;
      await new Promise<void>((go) => this.waiting.push(go));
    }
  }

  /** Ends `admitted` admissions, of which `handed` were handovers finished (the rate counts them). */
  done(admitted: number, handed: number): void {
    this.inFlight -= admitted;
    this.finished += handed;
    const waiting = this.waiting;
    this.waiting = [];
    for (const go of waiting) go();
  }
}
