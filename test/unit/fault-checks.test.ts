/**
 * The fault suite's judgement (test/faults/checks.ts) on made-up ledgers: each check finds what it
 * is there to find, so a run that passes says something.
 */
import { judge, outcomes, unexplained404s, type CounterReads, type Stored } from '../faults/checks';
import type { Ledger, Receive } from '../faults/workload';

const T = 1_000_000;

function ledger(parts: Partial<Ledger> = {}): Ledger {
  return {
    publishes: [{ n: 0, markers: ['r.0.0', 'r.0.1'], keyed: false, attempts: ['201'], ids: ['A', 'B'] }],
    receives: [],
    ackOutcomes: new Map(),
    acks: [],
    subscribed: [],
    streamRead: [],
    sweeps: { ok: 0, failed: 0 },
    startedAt: T,
    publishedAt: T,
    drainedAt: T,
    ...parts,
  };
}

const receive = (messageId: string, consumer: number, answered: number, until: number, ackedAt?: number): Receive => ({
  messageId, marker: messageId === 'A' ? 'r.0.0' : 'r.0.1', consumer, sent: answered - 5, answered, until, ackedAt,
});

/** Everything delivered everywhere once, counters true. */
const healthy = () => {
  const l = ledger({
    receives: [receive('A', 0, T + 10, T + 6000, T + 20), receive('B', 1, T + 10, T + 6000, T + 20)],
    subscribed: [{ messageId: 'A', marker: 'r.0.0', loop: 0 }, { messageId: 'B', marker: 'r.0.1', loop: 1 }],
    streamRead: ['r.0.0', 'r.0.1'],
  });
  const stored: Stored = {
    stream: ['r.0.0', 'r.0.1'],
    subscription: [{ messageId: 'A', marker: 'r.0.0' }, { messageId: 'B', marker: 'r.0.1' }],
    webhook: [{ messageId: 'A', marker: 'r.0.0', status: 200, at: T + 5 }, { messageId: 'B', marker: 'r.0.1', status: 200, at: T + 5 }],
  };
  const counters: CounterReads = {
    queue: { message_count: 0, truth: 0 },
    stream: { message_count: 2, truth: 2 },
    subscription: { message_count: 2, truth: 2 },
    webhook: { success_count: 2, failure_count: 0, truthSuccess: 2, truthFailure: 0 },
  };
  return { l, stored, counters };
};

const oneCopy = () => 1;

describe('fault suite checks', () => {
  it('find nothing in a healthy run', () => {
    const { l, stored, counters } = healthy();
    const { findings } = judge(l, stored, counters, [], oneCopy);
    expect(findings).toEqual({
      envelope: [],
      lost: { queue: [], stream: [], streamGroup: [], subscriptionStored: [], subscriber: [], webhook: [] },
      refusedButStored: [],
      heldTwice: [],
      subscriberTwice: [],
      deliveredAfterAck: [],
      counters: [],
    });
  });

  it('find a message answered 201 that a binding never got', () => {
    const { l, stored, counters } = healthy();
    l.receives = l.receives.filter((r) => r.messageId !== 'B');
    stored.webhook = stored.webhook.filter((d) => d.messageId !== 'A');
    stored.stream = ['r.0.0'];
    expect(judge(l, stored, counters, [], oneCopy).findings.lost).toMatchObject({ queue: ['B'], webhook: ['A'], stream: ['r.0.1'] });
  });

  it('find a stored message of a publish that was only ever refused with 4xx', () => {
    const { l, stored, counters } = healthy();
    l.publishes.push({ n: 1, markers: ['r.1.0'], keyed: false, attempts: ['503 SERVICE_UNAVAILABLE', '400 INVALID_REQUEST'] });
    l.publishes.push({ n: 2, markers: ['r.2.0'], keyed: false, attempts: ['400 INVALID_REQUEST'] });
    stored.stream.push('r.1.0', 'r.2.0');
    // r.1.0 met a 5xx first, so it may be stored; r.2.0 was only refused.
    expect(judge(l, stored, counters, [], oneCopy).findings.refusedButStored).toEqual(['r.2.0']);
    expect(outcomes(l)).toMatchObject({ refused: ['r.2.0'], gaveUp: 1 });
  });

  it('find two consumers holding one message at once, unless SQS held two copies of it', () => {
    const { l, stored, counters } = healthy();
    l.receives.push(receive('A', 1, T + 15, T + 6000));
    expect(judge(l, stored, counters, [], oneCopy).findings.heldTwice).toHaveLength(1);
    expect(judge(l, stored, counters, [], () => 2).findings.heldTwice).toEqual([]);
  });

  it('find a message delivered again after an acknowledged ack', () => {
    const { l, stored, counters } = healthy();
    l.receives.push(receive('A', 1, T + 9000, T + 15000));
    const { findings, duplicates } = judge(l, stored, counters, [], oneCopy);
    expect(findings.deliveredAfterAck).toHaveLength(1);
    expect(duplicates.queueAfterAck).toBe(1);
  });

  it('find counters that differ from the truth, and a message given twice to one subscriber', () => {
    const { l, stored, counters } = healthy();
    counters.stream.message_count = 3;
    counters.webhook.success_count = 3;
    l.subscribed.push({ messageId: 'A', marker: 'r.0.0', loop: 1 });
    const { findings } = judge(l, stored, counters, [], oneCopy);
    expect(findings.counters).toEqual(['stream message_count 3, the stream holds 2', 'webhook success_count 3, deliveries answered 2xx 2']);
    expect(findings.subscriberTwice).toEqual(['A ×2']);
  });

  it('tell webhook retries from POSTs after a 2xx', () => {
    const { l, stored, counters } = healthy();
    stored.webhook = [
      { messageId: 'A', marker: 'r.0.0', status: 500, at: T + 1 },
      { messageId: 'A', marker: 'r.0.0', status: 200, at: T + 2 },
      { messageId: 'A', marker: 'r.0.0', status: 200, at: T + 3 },
      { messageId: 'B', marker: 'r.0.1', status: 200, at: T + 2 },
    ];
    expect(judge(l, stored, counters, [], oneCopy).duplicates).toMatchObject({ webhookAfterFailure: 1, webhookAfterSuccess: 1, webhookAfterSuccessFromJobCopies: 0 });
    expect(judge(l, stored, counters, [], oneCopy, () => 2).duplicates).toMatchObject({ webhookAfterSuccess: 1, webhookAfterSuccessFromJobCopies: 1 });
  });

  it('count acks answered 404 before any ack of the message succeeded', () => {
    const l = ledger({
      acks: [
        { messageId: 'A', outcome: 'MESSAGE_NOT_FOUND', at: T + 1, afterServerError: true },
        { messageId: 'B', outcome: 'acknowledged', at: T + 1, afterServerError: false },
        { messageId: 'B', outcome: 'MESSAGE_NOT_FOUND', at: T + 2, afterServerError: false },
      ],
    });
    expect(unexplained404s(l)).toEqual({ first: 0, retried: 1 });
  });
});
