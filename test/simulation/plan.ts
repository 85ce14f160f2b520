/**
 * The simulation's plan: every step, drawn from one seed before anything runs, so a seed names a
 * history (which actors, how many requests, which options). What the engines then do with the
 * concurrent requests is not seeded (threads, sockets, timers), which is why a failure is replayed
 * by seed and minimised by running shorter plans (./minimise.ts), and why a defect a seed reaches
 * is reached on most runs of it, not on every one.
 */
import { seededRandom } from '../../local/seeded-random';
import type { WebhookAction } from './actors-webhooks';
import type { YoungAction } from './actors-young';

/** What an actor does in one step. */
export type Action =
  /**
   * `n` concurrent publish requests to the stream's topic (some batches of 2 to 5), while a share
   * of DynamoDB calls take up to `slowMs` more (storage slow for the burst's time), before the
   * engine applies them or (`slowAfter`) after, on the way back. With `lateChunk`, one chunk put
   * of the burst to the stream's log and one to the subscription's land only after their blocks
   * were settled as dead (./actors-streams.ts `lateChunkRule`).
   */
  | { kind: 'stream-burst'; n: number; batchShare: number; slowShare: number; slowMs: number; slowAfter: boolean; lateChunk: boolean }
  /** Publishes to the work queue: single, batch, Idempotency-Key (sent twice at once), short delays. */
  | { kind: 'queue-publish'; n: number }
  /** Consumers of the work queue: random visibility, then ack, batch ack, no ack, or release. */
  | { kind: 'queue-consume'; consumers: number; rounds: number }
  /** Held publishes (delay beyond 900 s or `deliver_at`) to the counted queue, some cancelled. */
  | { kind: 'held'; n: number; cancels: number }
  /** Poison messages to a `max_retries` 0 queue with a dead-letter topic whose send is slower than the visibility. */
  | { kind: 'poison'; n: number; consumers: number; dlqDelayMs: number }
  /** `n` `every` schedules, all due at one second, publishing to the schedules' stream. */
  | { kind: 'schedules'; n: number }
  /** Ordered queue (./actors-fifo.ts): `groups` keys of `n` publishes each, in order, beside `consumers` consumers of `rounds` consumes. */
  | { kind: 'fifo'; groups: number; n: number; consumers: number; rounds: number }
  /** Stream consumer groups (./actors-streams.ts): `rounds` rounds of up to `pages` pages per group, from earliest, latest, an offset or the commit, committing some. */
  | { kind: 'stream-groups'; groups: number; rounds: number; pages: number }
  /** Subscribers (./actors-subscribers.ts): `concurrent` consumes at once with one subscriber id, `rounds` times, per subscriber. */
  | { kind: 'subscribers'; subscribers: number; concurrent: number; rounds: number }
  /** Redrive (./actors-redrive.ts): `n` messages dead-lettered by `consumers` that never ack, then redriven to a topic. */
  | { kind: 'redrive'; n: number; consumers: number }
  /** Webhooks (./actors-webhooks.ts): publishes, a dead endpoint, two bulk replays at once, a lowered rate_limit. */
  | WebhookAction
  /** Young queues (./actors-young.ts): a queue created mid-run (`recreate`: deleted and created again at once), `n` publishes and `consumers` consumers right after its 201. */
  | YoungAction;

export interface Step {
  index: number;
  actions: Action[];
}

export interface PlanOptions {
  steps: number;
  /** Largest burst (requests at one resource at once). */
  maxBurst: number;
  /** Only these action kinds (a minimised replay keeps the failing ones). */
  kinds?: Action['kind'][];
  /** Size of the newer actors (ordered queues, stream groups, subscribers, redrive, young queues): 1 for long runs, less for the jest run. */
  scale?: number;
}

/** In fours: the first steps run them four at a time, the third the rest (the schedules first: their runs come 12 s later). */
const KINDS: Action['kind'][] = ['schedules', 'stream-burst', 'dead-endpoint', 'poison', 'held', 'replay', 'queue-publish', 'rate-change', 'queue-consume', 'webhook-publish', 'fifo', 'stream-groups', 'subscribers', 'redrive', 'young-queue'];

export function makePlan(seed: number, o: PlanOptions): Step[] {
  const random = seededRandom(seed);
  // Drawn from a source of its own, so the draws of every other choice are what they were before
  // late chunks were added (a seed names the same history as in earlier reports).
  const lateRandom = seededRandom(seed ^ 0x1a7e);
  // Young queues draw from a source of their own too: the other actors' draws stay the seed's.
  const youngRandom = seededRandom(seed ^ 0x0e9a);
  const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
  const kinds = o.kinds ?? KINDS;
  let firstBurst = 1;
  /** `int` with its upper bound scaled (never below `lo`). */
  const sized = (lo: number, hi: number) => int(lo, Math.max(lo, Math.round(hi * (o.scale ?? 1))));
  const action = (kind: Action['kind']): Action => {
    switch (kind) {
      case 'stream-burst':
        // The first burst is as large as allowed (300: the in-flight limit of a log is 128).
        return { kind, n: firstBurst-- > 0 ? o.maxBurst : int(Math.min(40, o.maxBurst), o.maxBurst), batchShare: random() * 0.3, slowShare: random() * 0.5, slowMs: int(100, 1500), slowAfter: random() < 0.7, lateChunk: lateRandom() < 0.5 };
      case 'queue-publish':
        return { kind, n: int(5, Math.min(60, o.maxBurst)) };
      case 'queue-consume':
        return { kind, consumers: int(1, 4), rounds: int(1, 3) };
      case 'held':
        return { kind, n: int(2, 12), cancels: int(0, 3) };
      case 'poison':
        return { kind, n: int(1, 6), consumers: int(3, 6), dlqDelayMs: int(1500, 3000) };
      case 'schedules':
        return { kind, n: int(Math.min(50, o.maxBurst), o.maxBurst) };
      case 'webhook-publish':
        return { kind, n: int(5, Math.min(100, o.maxBurst)) };
      case 'dead-endpoint':
        return { kind };
      case 'replay':
        return { kind, n: int(3, 10) };
      case 'fifo':
        return { kind, groups: sized(1, 6), n: sized(2, 12), consumers: sized(1, 4), rounds: sized(1, 6) };
      case 'stream-groups':
        return { kind, groups: sized(1, 4), rounds: sized(1, 4), pages: sized(1, 5) };
      case 'subscribers':
        return { kind, subscribers: sized(1, 4), concurrent: sized(2, 6), rounds: sized(1, 5) };
      case 'redrive':
        return { kind, n: sized(1, 40), consumers: 3 };
      case 'young-queue': {
        const yint = (lo: number, hi: number) => lo + Math.floor(youngRandom() * (Math.max(lo, Math.round(hi * (o.scale ?? 1))) - lo + 1));
        return { kind, n: yint(2, 30), consumers: yint(1, 4), recreate: youngRandom() < 0.5 };
      }
      case 'rate-change':
        return { kind, n: 60, from: 10, to: int(1, 3) };
    }
  };
  const steps: Step[] = [];
  for (let i = 0; i < o.steps; i++) {
    // The first steps cover every kind once, four at a time and the rest in the third (the newer,
    // smaller actors join the third step, so the first two draw what they drew before them; a run
    // of 3 steps reaches every actor), then 1 or 2 kinds at random, at once.
    const first = i < 2 ? kinds.slice(4 * i, 4 * i + 4) : i === 2 ? kinds.slice(8) : [];
    const picked = [...first];
    const more = first.length ? 0 : int(1, 2);
    for (let k = 0; k < more; k++) {
      const kind = kinds[int(0, kinds.length - 1)];
      if (!picked.includes(kind)) picked.push(kind);
    }
    steps.push({ index: i, actions: picked.map(action) });
  }
  return steps;
}

/** One line per step, for a failure's history. */
export function describeStep(s: Step): string {
  return `step ${s.index}: ${s.actions.map((a) => Object.entries(a).map(([k, v]) => (k === 'kind' ? v : `${k}=${typeof v === 'number' ? Math.round(v * 100) / 100 : v}`)).join(' ')).join(' + ')}`;
}
