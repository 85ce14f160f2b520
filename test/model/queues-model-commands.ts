/**
 * The commands of the queue model test (queues.model.test.ts) and the reference model they keep:
 * publish (single, batch, delayed, keyed), consume, ack (current, older, altered and foreign
 * handles), batch ack, a wait, a redrive, each followed by a check of the queue's message_count
 * against the model. Each command checks the real answer against what the model allows
 * (docs/publishing-and-queues.md) and throws on a difference.
 */
import fc from 'fast-check';
import type { client } from '../fixtures/http';
import { unique } from '../fixtures/queues';
import { redrive } from '../../lambda/queues/redrive';
import { sleep } from './harness';

/** Tolerance around the model's visibility windows (SQS delivery time vs. our clocks). */
export const SLACK_MS = 400;
/** A consume answers within timeout_seconds (at least 1 s: the shortest long poll) plus this. */
const CONSUME_MARGIN_MS = 4000;

export type Call = ReturnType<typeof client>;

interface Delivery {
  handle: string;
  /** When the consume that returned it was sent and answered (the handle's visibility counts from between). */
  sentAt: number;
  answeredAt: number;
  visibilityMs: number;
}

interface MessageModel {
  id: string;
  payload: string;
  key?: string;
  /** Publish order (FIFO keys). */
  seq: number;
  publishedAt: number;
  /** When its publish was answered (the service's publish time is between the two). */
  publishedBy: number;
  /** Not deliverable before (delay, standard queues). */
  notBefore: number;
  deliveries: Delivery[];
  acked: boolean;
}

export interface Model {
  fifo: boolean;
  maxRetries: number;
  ttlMs: number;
  messages: Map<string, MessageModel>;
  seq: number;
  /** Foreign handles (of another queue's messages) to ack with. */
  foreign: { id: string; handle: string }[];
  /** Redriven copies (published again to the queue's own topic from its dead-letter queue): by payload. */
  redriven: number;
}

export interface Real {
  call: Call;
  ns: string;
  queue: string;
  topic: string;
  dlq: string;
}

/** Docs: an expired message stops counting at most one expiry bucket after its TTL; a bucket is a tenth of the TTL, 1 to 60 s. */
const bucketWidthMs = (ttlMs: number) => Math.min(60_000, Math.max(1_000, ttlMs / 10));

/**
 * The `message_count` the model allows for a read sent at `sent` and answered at `answered`:
 * [messages surely counted, messages that may be counted].
 */
function countBounds(m: Model, sent: number, answered: number): { min: number; max: number } {
  let min = 0;
  let max = m.redriven; // redriven copies are new messages the model does not follow
  for (const x of m.messages.values()) {
    if (x.acked) continue; // an ack answered 200 released it
    if (sent > x.publishedBy + m.ttlMs + bucketWidthMs(m.ttlMs) + SLACK_MS) continue; // past the reconciliation period
    max++;
    const last = x.deliveries[x.deliveries.length - 1];
    const outOfDeliveries = x.deliveries.length >= 1 + m.maxRetries && !(last && surelyCurrent(last, answered));
    const maybeExpired = answered > x.publishedAt + m.ttlMs - SLACK_MS;
    if (!outOfDeliveries && !maybeExpired) min++;
  }
  return { min, max };
}

/** Counter checks made, and how many of them were exact (nothing uncertain). */
export const counterChecks = { made: 0, exact: 0 };

async function checkCounters(m: Model, r: Real, when: string) {
  const sent = Date.now();
  const res = await r.call('GET', `/queues/${r.queue}`);
  const answered = Date.now();
  expectOk(res, 200, 'get queue');
  const { min, max } = countBounds(m, sent, answered);
  const got = res.body.data.message_count;
  counterChecks.made++;
  if (min === max) counterChecks.exact++;
  if (got < min || got > max) throw new Error(`${when}: message_count ${got}, the model says ${min === max ? min : `${min} to ${max}`}`);
}

const surelyCurrent = (d: Delivery, at: number) => at < d.sentAt + d.visibilityMs - SLACK_MS;
const surelyOver = (d: Delivery, at: number) => at > d.answeredAt + d.visibilityMs + SLACK_MS;
export const expired = (m: Model, msg: MessageModel, at: number) => at > msg.publishedAt + m.ttlMs + SLACK_MS;

export function expectOk(res: { status: number; text: string }, status: number, what: string) {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${res.text.slice(0, 300)}`);
}

class Publish implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly count: number,
    readonly keys: (string | undefined)[],
    readonly delay: number,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const items = Array.from({ length: this.count }, (_, i) => ({
      payload: `p${m.seq + i}-${unique('x')}`,
      ...(this.keys[i] !== undefined ? { partition_key: this.keys[i] } : {}),
      ...(this.delay ? { delay_seconds: this.delay } : {}),
    }));
    const started = Date.now();
    const res =
      this.count === 1
        ? await r.call('POST', `/topics/${r.topic}/messages`, items[0])
        : await r.call('POST', `/topics/${r.topic}/messages/batch`, { messages: items });
    expectOk(res, 201, 'publish');
    const answered = Date.now();
    const ids: string[] = this.count === 1 ? [res.body.data.message_id] : res.body.data.message_ids;
    ids.forEach((id, i) =>
      m.messages.set(id, {
        id,
        payload: items[i].payload,
        key: this.keys[i],
        seq: m.seq++,
        publishedAt: started,
        publishedBy: answered,
        // Ordered queues take no per-message delay (docs: only the queue's own default).
        notBefore: m.fifo ? 0 : started + this.delay * 1000,
        deliveries: [],
        acked: false,
      }),
    );
  }
  toString = () => `Publish(${this.count}, keys=${JSON.stringify(this.keys)}, delay=${this.delay})`;
}

class Consume implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly max: number,
    readonly timeout: number,
    readonly visibility: number,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const sentAt = Date.now();
    const res = await r.call('POST', `/queues/${r.queue}/messages/consume`, { max_messages: this.max, timeout_seconds: this.timeout, visibility_timeout_seconds: this.visibility });
    const answeredAt = Date.now();
    expectOk(res, 200, 'consume');
    const budget = Math.max(1, this.timeout) * 1000 + CONSUME_MARGIN_MS;
    if (answeredAt - sentAt > budget) throw new Error(`consume answered after ${answeredAt - sentAt} ms, over its budget of ${budget} ms`);
    const got: { message_id: string; payload: string; receipt_handle: string; receive_count: number }[] = res.body.data.messages;
    if (got.length > this.max) throw new Error(`consume returned ${got.length} > max_messages ${this.max}`);
    const inAnswer = new Set<string>();
    for (const g of got) {
      const msg = m.messages.get(g.message_id);
      if (!msg) throw new Error(`consume returned ${g.message_id}, never answered 201`);
      if (msg.payload !== g.payload) throw new Error(`payload of ${g.message_id} changed`);
      if (msg.acked) throw new Error(`consume returned ${g.message_id}, acknowledged before`);
      // At the answer too: a long poll sent during the delay may rightly receive it when the delay ends.
      if (answeredAt < msg.notBefore - SLACK_MS) throw new Error(`consume returned ${g.message_id} before its delay ended`);
      if (expired(m, msg, sentAt)) throw new Error(`consume returned ${g.message_id} after its TTL`);
      // Judged at the answer: a long poll sent while the earlier delivery was still visible to its
      // consumer may rightly receive the message once that visibility ends, before it answers.
      const live = msg.deliveries.find((d) => surelyCurrent(d, answeredAt));
      if (live) throw new Error(`consume returned ${g.message_id} while its delivery answered at ${live.answeredAt} was still visible to its consumer`);
      if (msg.deliveries.length + 1 > 1 + m.maxRetries) throw new Error(`${g.message_id} delivered ${msg.deliveries.length + 1} times with max_retries ${m.maxRetries}`);
      if (m.fifo && msg.key !== undefined) {
        for (const earlier of m.messages.values()) {
          if (earlier.key !== msg.key || earlier.seq >= msg.seq || earlier.acked || inAnswer.has(earlier.id)) continue;
          const outOfDeliveries = earlier.deliveries.length >= 1 + m.maxRetries;
          if (!outOfDeliveries && !expired(m, earlier, answeredAt)) throw new Error(`FIFO key ${msg.key}: ${g.message_id} returned before the earlier ${earlier.id}`);
        }
      }
      inAnswer.add(g.message_id);
      msg.deliveries.push({ handle: g.receipt_handle, sentAt, answeredAt, visibilityMs: this.visibility * 1000 });
    }
  }
  toString = () => `Consume(max=${this.max}, timeout=${this.timeout}, visibility=${this.visibility})`;
}

type AckKind = 'latest' | 'older' | 'altered' | 'foreign';

/** The answer the model allows for an ack of `msg` with delivery `d` at [sent, answered]. */
function allowedAck(msg: MessageModel, d: Delivery, sent: number, kind: AckKind): number[] {
  if (kind === 'altered') return [409];
  if (msg.acked) return [404];
  const newer = msg.deliveries.indexOf(d) < msg.deliveries.length - 1;
  if (newer) return [409]; // superseded by a later receive (its own visibility had ended)
  if (surelyCurrent(d, sent)) return [200];
  if (surelyOver(d, sent)) return [409];
  return [200, 409];
}

function alter(handle: string): string {
  const [v, payload, sig] = handle.split('.');
  const flipped = sig[0] === 'A' ? `B${sig.slice(1)}` : `A${sig.slice(1)}`;
  return [v, payload, flipped].join('.');
}

class Ack implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly pick: number,
    readonly kind: AckKind,
  ) {}
  check = (m: Readonly<Model>) => [...m.messages.values()].some((x) => x.deliveries.length > 0);
  async run(m: Model, r: Real) {
    const delivered = [...m.messages.values()].filter((x) => x.deliveries.length > 0);
    const msg = delivered[this.pick % delivered.length];
    if (this.kind === 'foreign') {
      const f = m.foreign[this.pick % m.foreign.length];
      const res = await r.call('POST', `/queues/${r.queue}/messages/${f.id}/ack`, { receipt_handle: f.handle });
      if (res.status !== 404) throw new Error(`ack with a foreign handle answered ${res.status}, the model allows 404`);
      return;
    }
    const d = this.kind === 'older' ? msg.deliveries[0] : msg.deliveries[msg.deliveries.length - 1];
    const handle = this.kind === 'altered' ? alter(d.handle) : d.handle;
    const sent = Date.now();
    const res = await r.call('POST', `/queues/${r.queue}/messages/${msg.id}/ack`, { receipt_handle: handle });
    const allowed = allowedAck(msg, d, sent, this.kind);
    if (!allowed.includes(res.status)) throw new Error(`ack (${this.kind}) of ${msg.id} answered ${res.status} ${res.text.slice(0, 200)}; the model allows ${allowed.join(' or ')}`);
    if (res.status === 200) msg.acked = true;
  }
  toString = () => `Ack(${this.pick}, ${this.kind})`;
}

class BatchAck implements fc.AsyncCommand<Model, Real> {
  constructor(readonly picks: number[]) {}
  check = (m: Readonly<Model>) => [...m.messages.values()].some((x) => x.deliveries.length > 0);
  async run(m: Model, r: Real) {
    const delivered = [...m.messages.values()].filter((x) => x.deliveries.length > 0);
    const chosen = this.picks.map((p) => delivered[p % delivered.length]);
    const entries = chosen.map((msg) => ({ message_id: msg.id, receipt_handle: msg.deliveries[msg.deliveries.length - 1].handle }));
    const sent = Date.now();
    const res = await r.call('POST', `/queues/${r.queue}/messages/ack`, { entries });
    expectOk(res, 200, 'batch ack');
    const results: { message_id: string; acknowledged: boolean; error?: { code: string } }[] = res.body.data.results;
    const wonInCall = new Set<string>();
    results.forEach((x, i) => {
      const msg = chosen[i];
      const d = msg.deliveries[msg.deliveries.length - 1];
      // A second entry of the same message in one call: the first may have won it.
      const allowed = wonInCall.has(msg.id) ? [404] : allowedAck(msg, d, sent, 'latest');
      const status = x.acknowledged ? 200 : x.error?.code === 'MESSAGE_NOT_FOUND' ? 404 : x.error?.code === 'INVALID_RECEIPT_HANDLE' ? 409 : 500;
      if (!allowed.includes(status)) throw new Error(`batch ack entry ${i} (${msg.id}) answered ${status}; the model allows ${allowed.join(' or ')}`);
      if (status === 200) wonInCall.add(msg.id);
    });
    for (const id of wonInCall) m.messages.get(id)!.acked = true;
  }
  toString = () => `BatchAck(${JSON.stringify(this.picks)})`;
}

class Wait implements fc.AsyncCommand<Model, Real> {
  constructor(readonly ms: number) {}
  check = () => true;
  async run() {
    await sleep(this.ms);
  }
  toString = () => `Wait(${this.ms})`;
}

/** Runs a command, then checks the queue's message_count against the model (a check point between commands). */
class Checked implements fc.AsyncCommand<Model, Real> {
  constructor(readonly inner: fc.AsyncCommand<Model, Real>) {}
  check = (m: Readonly<Model>) => this.inner.check(m);
  async run(m: Model, r: Real) {
    await this.inner.run(m, r);
    await checkCounters(m, r, `after ${this.inner.toString()}`);
  }
  toString = () => this.inner.toString();
}

/** Moves the dead-letter queue's messages back to the queue's topic (npm run admin -- redrive). */
class Redrive implements fc.AsyncCommand<Model, Real> {
  check = () => true;
  async run(m: Model, r: Real) {
    const res = await redrive(r.ns, r.dlq, { toTopic: r.topic });
    // Redriven messages come back as new messages (new ids); the final drain accounts for them.
    m.redriven += res.moved;
  }
  toString = () => 'Redrive()';
}

const keyArb = fc.option(fc.constantFrom('k1', 'k2'), { nil: undefined });
export const commands = [
  fc.tuple(fc.integer({ min: 1, max: 4 }), fc.boolean()).chain(([n, delayed]) =>
    fc.tuple(fc.array(keyArb, { minLength: n, maxLength: n }), delayed ? fc.constantFrom(1, 2) : fc.constant(0)).map(([keys, delay]) => new Publish(n, keys, delay)),
  ),
  fc.tuple(fc.integer({ min: 1, max: 12 }), fc.constantFrom(0, 0, 1, 2), fc.integer({ min: 1, max: 3 })).map(([max, t, v]) => new Consume(max, t, v)),
  fc.tuple(fc.nat(50), fc.constantFrom<AckKind>('latest', 'latest', 'latest', 'older', 'altered', 'foreign')).map(([p, k]) => new Ack(p, k)),
  fc.array(fc.nat(50), { minLength: 1, maxLength: 5 }).map((p) => new BatchAck(p)),
  fc.integer({ min: 300, max: 2500 }).map((ms) => new Wait(ms)),
  fc.constant(new Redrive()),
].map((arb) => arb.map((c: fc.AsyncCommand<Model, Real>) => new Checked(c)));
