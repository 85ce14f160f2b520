/**
 * Each checker of the simulation can fail: fed a history that breaks its promise it reports a
 * violation, fed one that keeps it it reports none. (The simulation run, ./simulation.test.ts,
 * shows them failing on the service itself: docs/design/0014-whole-service-simulation.md lists what each found.)
 */
import { newSeen } from './actors';
import { countEquals, deadLetteredOnce, envelopes, exactlyOnceInLog, heldQueueTruth, idempotency, readYourWrites, schedulesRanOnce, unread, workQueue, type HeldState } from './checkers';
import { deadDisabled, delivered, noPostAfter2xx, placesHold, rateHolds, replayedOnce } from './checkers-webhooks';
import { answersDocumented } from './documented';
import { fifoQueue } from './checkers-fifo';
import type { FifoReceive } from './actors-fifo';
import { countsAgree, streamGroups } from './checkers-streams';
import type { StreamPage } from './actors-streams';
import { subscribersOnce } from './checkers-subscribers';
import { redrivenOnce } from './checkers-redrive';
import { youngQueues } from './checkers-young';
import { newYoungSeen } from './actors-young';
import { Ledger, type Entry } from './ledger';
import type { Post } from './receivers';

const ledgerWith = (...promised: [string, string, string][]) => {
  const l = new Ledger(undefined as never);
  for (const [marker, id, topic] of promised) l.promised.set(marker, { id, marker, topic, step: 2 });
  return l;
};
const post = (path: string, marker: string, status: number, at: number, arrivedAt = at): Post => ({ path, messageId: `id-${marker}`, marker, status, at, arrivedAt });
const checkers = (vs: { checker: string }[]) => vs.map((v) => v.checker);

describe('simulation checkers', () => {
  it('read-your-writes: a 201 marker not read right after its step', () => {
    const seen = newSeen();
    seen.streamByStep.set(1, ['a', 'b']);
    expect(checkers(readYourWrites('stream-read-your-writes', seen, 1, ['a']))).toEqual(['stream-read-your-writes']);
    expect(readYourWrites('stream-read-your-writes', seen, 1, ['b', 'a'])).toEqual([]);
  });

  it('read-your-writes: held back by a pending block and read once the settle time passed is no violation; never read is', () => {
    const seen = newSeen();
    seen.streamByStep.set(1, ['a', 'b', 'c']);
    expect(unread(seen, 1, ['a'])).toEqual(['b', 'c']);
    expect(readYourWrites('stream-read-your-writes', seen, 1, ['a'], ['a', 'b', 'c'])).toEqual([]);
    const v = readYourWrites('stream-read-your-writes', seen, 1, ['a'], ['a', 'b']);
    expect(checkers(v)).toEqual(['stream-read-your-writes']);
    expect(v[0].evidence).toMatch(/^1 .*: c$/);
  });

  it('exactly once in a log: missing and twice', () => {
    const l = ledgerWith(['a', '1', 'r/s/x'], ['b', '2', 'r/s/x'], ['c', '3', 'r/w/x']);
    expect(checkers(exactlyOnceInLog('stream', l, 'r/s/', ['a', 'a']))).toEqual(['stream-201-missing', 'stream-twice']);
    expect(exactlyOnceInLog('stream', l, 'r/s/', ['a', 'b'])).toEqual([]);
  });

  it('idempotency: one key, two message ids', () => {
    const seen = newSeen();
    seen.idempotent.push({ key: 'k', ids: ['1', '2'], step: 0 });
    expect(checkers(idempotency(seen))).toEqual(['idempotency-one-message']);
    seen.idempotent[0].ids = ['1', '1'];
    expect(idempotency(seen)).toEqual([]);
  });

  it('work queue: never received, and received after an acknowledged ack (but an SQS copy)', () => {
    const l = ledgerWith(['a', '1', 'r/w/a'], ['b', '2', 'r/w/a']);
    const seen = newSeen();
    seen.workAcked.set('a', 1000);
    seen.workReceives.push({ marker: 'a', id: '1', sentAt: 900, step: 1 }, { marker: 'a', id: '1', sentAt: 2000, step: 1 });
    expect(checkers(workQueue(l, seen, 'r/w/', [], () => 1))).toEqual(['queue-201-never-delivered', 'queue-delivered-after-ack']);
    expect(workQueue(l, seen, 'r/w/', ['b'], () => 2)).toEqual([]);
  });

  it('dead letters: twice and never', () => {
    const l = ledgerWith(['p1', '1', 'r/p/x'], ['p2', '2', 'r/p/x']);
    const seen = newSeen();
    seen.poison.push('p1', 'p2');
    expect(checkers(deadLetteredOnce(l, seen, [['p1', 'd1'], ['p1', 'd2']]))).toEqual(['dead-lettered-more-than-once', 'dead-letter-lost']);
    expect(deadLetteredOnce(l, seen, [['p1', 'd1'], ['p2', 'd2'], ['p2', 'd2']])).toEqual([]);
  });

  it('counts: message_count against the truth', () => {
    expect(checkers(countEquals('held-count-after-reconcile', 'q', 'after', 0, 3, 1))).toEqual(['held-count-after-reconcile']);
    expect(countEquals('held-count-after-reconcile', 'q', 'after', 3, 3, 1)).toEqual([]);
  });

  it('held queue truth: a handed-over message once (in SQS), a cancel by what the service did', () => {
    // SQS holds 2 ordinary messages and `a`, handed over (in SQS's count, not to count again);
    // `b` is held; `c` cancelled (200), `d` cancelled though its answer was lost (a 5xx).
    const states = new Map<string, HeldState>([['a', 'handed'], ['b', 'held'], ['c', 'cancelled'], ['d', 'cancelled']]);
    expect(heldQueueTruth(3, ['a', 'b', 'c', 'd'], states)).toBe(4);
  });

  it('schedules: a time not run, run twice, or refused', () => {
    const seen = newSeen();
    const t = Date.parse('2026-11-27T10:00:00.000Z');
    seen.schedules.push({ name: 'a', startAt: t, step: 0 }, { name: 'b', startAt: t, step: 0 });
    const states = new Map([['b', { last_run_at: null, last_error: { code: 'SERVICE_UNAVAILABLE' } }]]);
    const a = 'a@2026-11-27T10:00:00.000Z';
    expect(checkers(schedulesRanOnce(seen, [a, a], states, [[a, '1'], [a, '2']]))).toEqual(['schedule-run-missing', 'schedule-run-twice', 'schedule-run-refused']);
    // A time not run names the claim the schedule still holds (why no tick made it).
    const claimed = new Map([['b', { last_run_at: null, last_error: null, claim: 'claim_until 2026-11-27T10:02:00.000Z (87 s from the read)' }]]);
    expect(schedulesRanOnce(seen, [a], claimed)[0].evidence).toContain('b (last_run_at null, last_error null, claim_until 2026-11-27T10:02:00.000Z (87 s from the read))');
    // The same run again with the same message id (a tick that died after its publish) is allowed.
    expect(schedulesRanOnce(seen, [a, a, 'b@2026-11-27T10:00:00.000Z'], new Map(), [[a, '1'], [a, '1']])).toEqual([]);
  });

  it('answers outside the envelope rules', () => {
    expect(checkers(envelopes(['POST /x: 502 BAD_GATEWAY']))).toEqual(['answer-documented']);
    expect(envelopes(['POST /topics/a/messages: 504 INTEGRATION_TIMEOUT (retry-after undefined): only 500 ...'])).toEqual([]);
  });

  it('every answer is a status and code the OpenAPI document lists for its route', () => {
    const e = (method: string, path: string, status: number, code?: string, step = 1): Entry => ({ step, actor: 'a', method, path, status, code, ids: [], at: 0 });
    const fine = [e('POST', '/topics/a/b/messages', 201), e('POST', '/topics/a/b/messages/batch', 409, 'IDEMPOTENCY_KEY_IN_USE'), e('POST', '/queues/q/messages/m1/ack', 409, 'INVALID_RECEIPT_HANDLE'), e('GET', '/queues/q', 504, 'INTEGRATION_TIMEOUT'), e('POST', '/queues/q/messages/consume', 0), e('POST', '/topics/a/messages', 504)];
    expect(answersDocumented(fine)).toEqual([]);
    // A consume has no 409, a stream consume no QUEUE_NOT_FOUND, a publish answers 201 not 200.
    const bad = [e('POST', '/queues/q/messages/consume', 409, 'INVALID_RECEIPT_HANDLE', 3), e('POST', '/streams/s/messages/consume', 404, 'QUEUE_NOT_FOUND', 2), e('POST', '/topics/a/messages', 200, undefined, 4)];
    const vs = answersDocumented(bad);
    expect(checkers(vs)).toEqual(['answer-undocumented-status-code']);
    expect([vs[0].step, vs[0].count]).toEqual([2, 3]);
  });

  it('ordered queue: never received, out of order, a later one while an earlier is in flight, two consumers within the visibility', () => {
    const l = ledgerWith(['f1.0.0', '1', 'r/f/x'], ['f1.0.1', '2', 'r/f/x'], ['f1.0.2.0', '3', 'r/f/x'], ['f1.0.2.1', '4', 'r/f/x'], ['f1.1.0', '5', 'r/f/x']);
    const rc = (marker: string, id: string, consumer: string, sentAt: number, answeredAt: number, ackSentAt?: number): FifoReceive => ({ marker, id, consumer, sentAt, answeredAt, visibility: 2, ackSentAt, step: 1 });
    const seen = { receives: [
      rc('f1.0.0', '1', 'a', 0, 100, 200),
      rc('f1.0.1', '2', 'b', 300, 400, 450),
      // The batch's items in one consume, in order.
      rc('f1.0.2.0', '3', 'a', 500, 600, 700),
      rc('f1.0.2.1', '4', 'a', 500, 600, 700),
      // Its visibility (2 s) ended before it came again.
      rc('f1.1.0', '5', 'a', 0, 100),
      rc('f1.1.0', '5', 'b', 2200, 2300, 2400),
    ] };
    expect(fifoQueue(l, seen, 'r/f/')).toEqual([]);
    const broken = { receives: [
      // f1.0.1 handed out while f1.0.0 is unacked and visible to no one; f1.0.2.0 before f1.0.1 was asked for.
      rc('f1.0.0', '1', 'a', 0, 100),
      rc('f1.0.2.0', '3', 'c', 150, 250, 260),
      rc('f1.0.1', '2', 'b', 300, 400, 450),
      // f1.1.0 to b 1 s into a's visibility of 2 s.
      rc('f1.1.0', '5', 'a', 0, 100),
      rc('f1.1.0', '5', 'b', 1000, 1100),
    ] };
    expect(checkers(fifoQueue(l, broken, 'r/f/'))).toEqual(['fifo-201-never-delivered', 'fifo-out-of-order', 'fifo-later-while-earlier-in-flight', 'fifo-two-consumers-within-visibility']);
  });

  it('stream groups: a page skips a message after its start or commit, returns one before it, or offsets do not increase', () => {
    const log = new Map([[0, 'a'], [1, 'b'], [2, 'c'], [4, 'd']]);
    const page = (how: StreamPage['how'], from: number | undefined, offsets: number[], next: number): StreamPage => ({ group: 'g', step: 1, how, from, messages: offsets.map((o) => ({ offset: o, partition: o % 2, marker: log.get(o) ?? '?' })), next });
    // Offset 3 is a failed publish's gap; a latest start is not judged for coverage; an empty page ends at its start.
    expect(streamGroups([page('earliest', 0, [0, 1], 2), page('committed', 2, [2, 4], 5), page('latest', undefined, [4], 5), page('offset', 5, [], 5)], log)).toEqual([]);
    const vs = streamGroups([page('committed', 1, [2, 4], 5), page('offset', 2, [1, 2], 3), page('earliest', 0, [0, 2, 1], 2)], log);
    expect(checkers(vs)).toEqual(['stream-group-skipped', 'stream-group-before-start', 'stream-group-offsets-not-increasing']);
  });

  it('log counts: message_count against what a reader reads from the start (a late chunk read inside a gap)', () => {
    expect(countsAgree('stream-count-vs-read', 's', 31, 31, 0, '')).toEqual([]);
    expect(countsAgree('stream-count-vs-read', 's', 31, 32, 1, '1 message stored inside its gaps')).toEqual([{ checker: 'stream-count-vs-read', step: 1, count: 1, evidence: 's: message_count 31, read from its start 32 (1 message stored inside its gaps)' }]);
  });

  it('subscribers: a retained 201 message a subscriber never got, or got twice', () => {
    const l = ledgerWith(['a', '1', 'r/s/x'], ['b', '2', 'r/s/x'], ['c', '3', 'r/s/x']);
    const seen = { got: new Map([['s1', [{ markers: ['a', 'b'], step: 1 }, { markers: [], step: 2 }]], ['s2', [{ markers: ['b'], step: 1 }, { markers: ['a'], step: 1 }]]]) };
    // c was not retained at all: the exactly-once checker's finding, not each subscriber's.
    expect(subscribersOnce(l, seen, 'r/s/', ['a', 'b'])).toEqual([]);
    seen.got.set('s3', [{ markers: ['a'], step: 1 }, { markers: ['a'], step: 2 }]);
    expect(checkers(subscribersOnce(l, seen, 'r/s/', ['a', 'b']))).toEqual(['subscriber-201-missing', 'subscriber-received-twice']);
  });

  it('redrive: a dead letter that never arrives, or arrives twice though every call succeeded', () => {
    const l = ledgerWith(['rd1', '1', 'r/rq/x'], ['rd2', '2', 'r/rq/x']);
    const ok = { markers: ['rd1', 'rd2'], calls: [{ step: 1, status: 200, moved: 2, notRemoved: 0 }] };
    expect(redrivenOnce(l, ok, [['rd1', 'x1'], ['rd2', 'x2']])).toEqual([]);
    // The calls moved one message and two copies arrived: the redrive published one twice.
    expect(checkers(redrivenOnce(l, { ...ok, calls: [{ step: 1, status: 200, moved: 1, notRemoved: 0 }] }, [['rd1', 'x1'], ['rd1', 'x3']]))).toEqual(['redrive-never-arrived', 'redrive-arrived-twice']);
    // Twice after a call that may have failed midway is the documented at-least-once.
    expect(redrivenOnce(l, { ...ok, calls: [...ok.calls, { step: 1, status: 503, moved: 0, notRemoved: 0 }] }, [['rd1', 'x1'], ['rd1', 'x3'], ['rd2', 'x2']])).toEqual([]);
    // As many copies arrived as the calls moved: the second copy was dead-lettered twice.
    expect(checkers(redrivenOnce(l, { ...ok, calls: [{ step: 1, status: 200, moved: 3, notRemoved: 0 }] }, [['rd1', 'x1'], ['rd1', 'x3'], ['rd2', 'x2']]))).toEqual(['dead-lettered-more-than-once']);
  });

  it('young queues: a consume of the live queue answered 404, a 201 never received, an old queue\'s message in the recreated one', () => {
    const seen = newYoungSeen();
    seen.promised.push({ marker: 'y2.0', queue: 'q', step: 2 }, { marker: 'y2.1', queue: 'q', step: 2 });
    seen.before.push({ marker: 'y2.old.0', queue: 'q', step: 2 });
    seen.received.push({ marker: 'y2.0', queue: 'q' });
    // y2.1 received from another queue of the same marker does not count.
    expect(checkers(youngQueues(seen, [{ marker: 'y2.1', queue: 'other' }]))).toEqual(['young-queue-201-never-delivered']);
    expect(youngQueues(seen, [{ marker: 'y2.1', queue: 'q' }])).toEqual([]);
    expect(checkers(youngQueues(seen, [{ marker: 'y2.1', queue: 'q' }, { marker: 'y2.old.0', queue: 'q' }]))).toEqual(['recreated-queue-old-message']);
    seen.refused.push({ step: 2, what: 'q: 404' });
    expect(checkers(youngQueues(seen, [{ marker: 'y2.1', queue: 'q' }]))).toEqual(['young-queue-consume-404']);
  });

  it('webhooks: a POST after a 2xx (not a concurrent one), never delivered, replayed twice', () => {
    const l = ledgerWith(['k1', '1', 'r/k/x'], ['k2', '2', 'r/k/x']);
    expect(checkers(noPostAfter2xx(l, [post('/ok', 'k1', 200, 1000), post('/ok', 'k1', 200, 2000)], ['/ok'], 'webhook-post-after-2xx'))).toEqual(['webhook-post-after-2xx']);
    expect(noPostAfter2xx(l, [post('/ok', 'k1', 200, 1500, 500), post('/ok', 'k1', 200, 1000, 900)], ['/ok'], 'webhook-post-after-2xx')).toEqual([]);
    expect(checkers(delivered(l, [post('/ok', 'k1', 200, 1), post('/ok', 'k2', 500, 1)], 'r/k/', '/ok'))).toEqual(['webhook-201-never-delivered']);
    expect(delivered(l, [post('/ok', 'k1', 200, 1), post('/ok', 'k2', 200, 1)], 'r/k/', '/ok')).toEqual([]);
    const seen = newSeen();
    seen.hooks.replayMarkers.push('k1', 'k2');
    expect(checkers(replayedOnce(l, [post('/replay', 'k1', 200, 1), post('/replay', 'k1', 200, 2)], seen.hooks))).toEqual(['replay-delivered-twice', 'replay-never-delivered']);
    expect(replayedOnce(l, [post('/replay', 'k1', 200, 1), post('/replay', 'k2', 200, 2)], seen.hooks)).toEqual([]);
  });

  it('webhooks: a dead endpoint not disabled in time; a rate above a lowered limit', () => {
    const dead = [post('/dead', 'd', 500, 0)];
    expect(checkers(deadDisabled(dead, 'failing', 45_000, 60_000, 0))).toEqual(['dead-endpoint-not-disabled']);
    expect(deadDisabled(dead, 'disabled', 45_000, 60_000, 0)).toEqual([]);
    expect(deadDisabled(dead, 'failing', 45_000, 30_000, 0)).toEqual([]);
    const seen = newSeen();
    seen.hooks.rateChanges.push({ at: 0, limit: 2, step: 1 });
    const burst = [5000, 5100, 5200, 5300].map((t, i) => post('/rate', `r${i}`, 200, t));
    expect(checkers(rateHolds(burst, seen.hooks))).toEqual(['rate-limit-after-change']);
    expect(rateHolds([5000, 5600, 6200].map((t, i) => post('/rate', `r${i}`, 200, t)), seen.hooks)).toEqual([]);
  });

  it('webhooks: more requests open at once than max_in_flight', () => {
    const l = new Ledger(undefined as never);
    // [arrived, answered]: three overlap at 150.
    const open = [[0, 200], [100, 300], [150, 160], [310, 400]].map(([a, t], i) => post('/slow', `s${i}`, 200, t, a));
    expect(checkers(placesHold(l, open, '/slow', 2))).toEqual(['in-flight-over-max']);
    expect(placesHold(l, open, '/slow', 3)).toEqual([]);
    // One answered at the millisecond the next arrived: the place was free.
    expect(placesHold(l, [post('/slow', 'a', 200, 100, 0), post('/slow', 'b', 200, 200, 100)], '/slow', 1)).toEqual([]);
  });
});
