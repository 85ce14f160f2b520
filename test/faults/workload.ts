/**
 * The fault suite's workload: publishers, queue consumers, two consumes of one subscriber, a
 * stream consumer group and a webhook receiver, all through the local gateway, with everything
 * they saw written to a ledger that ./checks.ts judges. Every random choice comes from the run's
 * seed.
 */
import { readHandle } from '../../lambda/queues/rules/receipt-handles';
import { sweep } from '../../lambda/sweeper/tasks';
import { backoffMs, retryable, type Answer, type ApiClient } from './api';
import { seededRandom, type FaultInjector } from './injector';
import type { FaultPolicy, Service } from './fault-kinds';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The bindings of the run, all on `${root}/#`. */
export interface Bindings {
  root: string;
  queue: string;
  stream: string;
  subscription: string;
  webhook: string;
}

export interface RunOptions {
  seed: number;
  /** Messages to publish (valid ones; refused publishes come on top). */
  messages: number;
  policy: FaultPolicy;
  /** A full outage of one service once this share of the messages is published. */
  outage?: { service: Service; at: number; ms: number };
  publishers: number;
  consumers: number;
  /** Visibility timeout of every queue consume (seconds). */
  visibilitySeconds: number;
  /** How long the fault-free drain may take at most. */
  drainMs: number;
}

type BadKind = 'wrong-type' | 'too-large' | 'no-binding' | 'property-type';

interface PublishRecord {
  n: number;
  markers: string[];
  bad?: BadKind;
  keyed: boolean;
  /** Status (and code) of every attempt, in order. */
  attempts: string[];
  /** Message ids of the 201, if one came. */
  ids?: string[];
}

export interface Receive {
  messageId: string;
  marker: string;
  consumer: number;
  /** When the consume was sent and answered (epoch ms). */
  sent: number;
  answered: number;
  /** When the delivery's visibility ends, as the receipt handle says. */
  until: number;
  /** When an ack of this delivery answered acknowledged, if one did. */
  ackedAt?: number;
}

export interface Ledger {
  publishes: PublishRecord[];
  receives: Receive[];
  /** Ack outcomes per entry: `acknowledged`, or the error code. */
  ackOutcomes: Map<string, number>;
  /** Every ack entry's answer: the message, the outcome, when, and whether an earlier try of this ack got a 5xx. */
  acks: { messageId: string; outcome: string; at: number; afterServerError: boolean }[];
  /** Messages the subscriber got, in order, from either of its two consumes. */
  subscribed: { messageId: string; marker: string; loop: number }[];
  /** Markers the stream's consumer group read (with repeats after failed commits). */
  streamRead: string[];
  sweeps: { ok: number; failed: number };
  startedAt: number;
  publishedAt: number;
  drainedAt: number;
}

const markerOf = (payload: string): string => {
  try {
    return (JSON.parse(payload) as { m?: string }).m ?? '';
  } catch {
    return '';
  }
};

export class Workload {
  readonly ledger: Ledger = {
    publishes: [],
    receives: [],
    ackOutcomes: new Map(),
    acks: [],
    subscribed: [],
    streamRead: [],
    sweeps: { ok: 0, failed: 0 },
    startedAt: 0,
    publishedAt: 0,
    drainedAt: 0,
  };
  private readonly random: () => number;
  private planned = 0;
  private publishSeq = 0;
  private publishing = true;
  private stopped = false;
  private outageStarted = false;
  /** Consecutive empty consumes since publishing ended, per actor. */
  private readonly idle = new Map<string, number>();

  constructor(
    private readonly api: ApiClient,
    private readonly injector: FaultInjector,
    private readonly b: Bindings,
    private readonly o: RunOptions,
    private readonly runId: string,
  ) {
    this.random = seededRandom(o.seed ^ 0x5eed);
  }

  /** Runs the faulty phase, then drains without faults until `done()` or the drain deadline. */
  async run(done: () => Promise<boolean>): Promise<Ledger> {
    const l = this.ledger;
    l.startedAt = Date.now();
    this.injector.set(this.o.policy);
    const sweeper = this.sweeper();
    const consumers = [
      ...Array.from({ length: this.o.consumers }, (_, i) => this.queueConsumer(i)),
      this.subscriber(0),
      this.subscriber(1),
      this.streamGroup(),
    ];
    await Promise.all(Array.from({ length: this.o.publishers }, () => this.publisher()));
    l.publishedAt = Date.now();
    this.publishing = false;
    this.injector.set(undefined);
    const deadline = Date.now() + this.o.drainMs;
    while (Date.now() < deadline && !(await done())) await sleep(250);
    l.drainedAt = Date.now();
    this.stopped = true;
    await Promise.all([...consumers, sweeper]);
    return l;
  }

  private pick<T>(items: T[]): T {
    return items[Math.floor(this.random() * items.length)];
  }

  /** Retries a request while the answer asks for it (5xx, 429, key in use), at most `max` times. */
  private async withRetries(send: () => Promise<Answer>, onAnswer: (a: Answer) => void = () => undefined, max = 12): Promise<Answer> {
    for (let attempt = 0; ; attempt++) {
      const a = await send();
      onAnswer(a);
      if (!retryable(a) || attempt + 1 >= max) return a;
      // A key in use stays in use for the first request's whole time limit: give up sooner.
      if (a.code === 'IDEMPOTENCY_KEY_IN_USE' && attempt >= 3) return a;
      await sleep(backoffMs(a, attempt, this.random));
    }
  }

  private async publisher() {
    const topics = [`${this.b.root}/orders`, `${this.b.root}/events/created`];
    while (this.planned < this.o.messages) {
      const n = this.publishSeq++;
      // Batches of 2 to 25 and some single publishes: both endpoints, and few requests per message.
      const single = this.random() < 0.2;
      const size = single ? 1 : 2 + Math.floor(this.random() * 24);
      const bad = this.random() < 0.04 ? this.pick<BadKind>(['wrong-type', 'too-large', 'no-binding', 'property-type']) : undefined;
      const keyed = this.random() < 0.2;
      const markers = Array.from({ length: size }, (_, i) => `${this.runId}.${n}.${i}`);
      if (!bad) this.planned += size;
      const messages: Record<string, unknown>[] = markers.map((m) => ({ payload: JSON.stringify({ m }), properties: { run: this.runId } }));
      let topic = this.pick(topics);
      if (bad === 'wrong-type') messages[messages.length - 1].payload = 12345;
      if (bad === 'too-large') messages[messages.length - 1].payload = JSON.stringify({ m: markers[markers.length - 1], pad: 'x'.repeat(256 * 1024) });
      if (bad === 'property-type') messages[0].properties = { run: 7 };
      if (bad === 'no-binding') topic = `${this.b.root}-unbound/x`;
      const rec: PublishRecord = { n, markers, bad, keyed, attempts: [] };
      this.ledger.publishes.push(rec);
      const path = single ? `/topics/${topic}/messages` : `/topics/${topic}/messages/batch`;
      const body = single ? messages[0] : { messages };
      const headers: Record<string, string> = keyed ? { 'Idempotency-Key': `k-${this.runId}-${n}` } : {};
      const a = await this.withRetries(
        () => this.api.call('POST', path, body, headers),
        (x) => rec.attempts.push(x.code ? `${x.status} ${x.code}` : String(x.status)),
      );
      if (a.status === 201) rec.ids = single ? [a.body?.data.message_id] : a.body?.data.message_ids;
      if (this.o.outage && !this.outageStarted && this.planned >= this.o.outage.at * this.o.messages) {
        this.outageStarted = true;
        this.injector.outage(this.o.outage.service, this.o.outage.ms);
      }
    }
  }

  /** Notes an actor's empty consumes once publishing has ended, and says whether the run is over. */
  private over(actor: string, gotNothing: boolean): boolean {
    if (this.stopped) return true;
    if (this.publishing) return false;
    this.idle.set(actor, gotNothing ? (this.idle.get(actor) ?? 0) + 1 : 0);
    return false;
  }

  /** Consecutive empty consumes of an actor since publishing ended. */
  idleOf(actor: string) {
    return this.idle.get(actor) ?? 0;
  }

  private async queueConsumer(i: number) {
    const path = `/queues/${this.b.queue}/messages`;
    for (;;) {
      const sent = Date.now();
      const a = await this.api.call('POST', `${path}/consume`, { max_messages: 10, timeout_seconds: 1, visibility_timeout_seconds: this.o.visibilitySeconds, consumer_id: `c${i}` });
      const answered = Date.now();
      const msgs = (a.status === 200 ? a.body?.data.messages : []) as { message_id: string; payload: string; receipt_handle: string }[];
      // What a consume returned is recorded and acked even when the run is over.
      const over = this.over(`queue${i}`, a.status === 200 && msgs.length === 0);
      if (over && msgs.length === 0) return;
      if (a.status !== 200) {
        await sleep(backoffMs(a, 1, this.random));
        continue;
      }
      const got = msgs.map((m) => {
        const r: Receive = { messageId: m.message_id, marker: markerOf(m.payload), consumer: i, sent, answered, until: readHandle(m.receipt_handle)?.delivery.u ?? sent };
        this.ledger.receives.push(r);
        return { r, entry: { message_id: m.message_id, receipt_handle: m.receipt_handle } };
      });
      let pending = got;
      let serverError = false;
      for (let attempt = 0; pending.length && attempt < 8; attempt++) {
        const ack = await this.api.call('POST', `${path}/ack`, { entries: pending.map((g) => g.entry) });
        if (ack.status !== 200) {
          serverError ||= ack.status >= 500;
          if (!retryable(ack)) break;
          await sleep(backoffMs(ack, attempt, this.random));
          continue;
        }
        const results = ack.body?.data.results as { acknowledged: boolean; error?: { code: string } }[];
        const again: typeof pending = [];
        results.forEach((res, k) => {
          const outcome = res.acknowledged ? 'acknowledged' : (res.error?.code ?? '?');
          this.ledger.ackOutcomes.set(outcome, (this.ledger.ackOutcomes.get(outcome) ?? 0) + 1);
          this.ledger.acks.push({ messageId: pending[k].r.messageId, outcome, at: Date.now(), afterServerError: serverError || res.error?.code === 'INTERNAL_ERROR' });
          if (res.acknowledged) pending[k].r.ackedAt = Date.now();
          else if (res.error?.code === 'INTERNAL_ERROR') again.push(pending[k]);
        });
        serverError ||= again.length > 0;
        pending = again;
      }
      if (over) return;
    }
  }

  /** Two of these share one subscriber id, so they race for the same cursor. */
  private async subscriber(loop: number) {
    for (;;) {
      const a = await this.api.call('POST', `/subscriptions/${this.b.subscription}/messages/consume`, { subscriber_id: 'sub-a', max_messages: 50, timeout_seconds: 1 });
      const msgs = (a.status === 200 ? a.body?.data.messages : []) as { message_id: string; payload: string }[];
      // Recorded first: the cursor has moved past them, whether or not the run is over.
      for (const m of msgs) this.ledger.subscribed.push({ messageId: m.message_id, marker: markerOf(m.payload), loop });
      if (this.over(`subscriber${loop}`, a.status === 200 && msgs.length === 0)) return;
      if (a.status !== 200) await sleep(backoffMs(a, 1, this.random));
    }
  }

  /** A consumer group that reads from its committed offset and commits what it read. */
  private async streamGroup() {
    for (;;) {
      const a = await this.api.call('POST', `/streams/${this.b.stream}/messages/consume`, { consumer_group: 'g1', max_messages: 100, timeout_seconds: 1 });
      const data = a.status === 200 ? (a.body?.data as { messages: { payload: string }[]; next_offset: number }) : undefined;
      for (const m of data?.messages ?? []) this.ledger.streamRead.push(markerOf(m.payload));
      if (this.over('stream', Boolean(data && data.messages.length === 0))) return;
      if (!data) {
        await sleep(backoffMs(a, 1, this.random));
        continue;
      }
      if (data.messages.length) await this.withRetries(() => this.api.call('POST', `/streams/${this.b.stream}/offsets/commit`, { consumer_group: 'g1', offset: data.next_offset }), undefined, 6);
    }
  }

  /** The sweeper on its timer, as `npm start` runs it (every 2 s), faults and all. */
  private async sweeper() {
    while (!this.stopped) {
      const out = await sweep(Date.now());
      const failed = Object.values(out).filter((r) => 'error' in r).length;
      this.ledger.sweeps.failed += failed;
      this.ledger.sweeps.ok += Object.keys(out).length - failed;
      await sleep(2000);
    }
  }
}
