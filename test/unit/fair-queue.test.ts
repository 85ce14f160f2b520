/**
 * The local emulation of SQS fair queues (local/fair-queue.ts) by the documented thresholds: a
 * tenant is noisy with more than 10% of the in-flight messages and at least 30 of its own, or more
 * than 10% of recent processing time; quiet tenants' messages come first, then noisy tenants' by
 * fewest in flight; noisy messages are still handed out when nothing quiet waits.
 */
import { FairQueueState, RECENT_MS } from '../../local/fair-queue';

function clock() {
  let now = 1_000_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}
const msg = (group: string | undefined, sentAt: number, id = `${group}-${sentAt}`) => ({ group, sentAt, id });

describe('FairQueueState', () => {
  it('with no history hands messages out oldest first, whatever their tenant', () => {
    const f = new FairQueueState(clock().now);
    expect(f.order([msg('b', 3), msg('a', 1), msg('b', 2)]).map((m) => m.sentAt)).toEqual([1, 2, 3]);
  });

  it('counts a tenant noisy by concurrency share only from 30 of its own in flight, over 10% of all', () => {
    const c = clock();
    const f = new FairQueueState(c.now);
    f.start(Array(10).fill('g:b'));
    c.advance(20_000);
    // a's messages just started: no processing time yet, so only the concurrency share can count.
    f.start(Array(29).fill('g:a'));
    expect(f.noisy()).toEqual(new Set(['g:b']));
    f.start(['g:a']);
    expect(f.noisy()).toEqual(new Set(['g:a', 'g:b']));
    // 30 of its own but not over 10% of the in-flight messages: not noisy by concurrency.
    f.start(Array(300).fill('g:c'));
    expect(f.noisy().has('g:a')).toBe(false);
  });

  it('orders several noisy tenants by fewest in flight, and still serves a noisy tenant when nothing quiet waits', () => {
    const c = clock();
    const f = new FairQueueState(c.now);
    const quietAt = f.start(Array(9).fill('g:many'));
    const slowAt = f.start(['g:slow']);
    c.advance(5000);
    f.finish(Array(9).fill('g:many'), quietAt);
    f.start(Array(3).fill('g:many'));
    c.advance(1000);
    // recent time: many 45 s + 3 s, slow 6 s: both over 10%, both noisy; slow has 1 in flight, many 3.
    expect(f.noisy()).toEqual(new Set(['g:many', 'g:slow']));
    expect(f.order([msg('many', 1), msg('slow', 2)]).map((m) => m.group)).toEqual(['slow', 'many']);
    f.finish(['g:slow'], slowAt);
    // Only noisy messages wait: they are handed out, oldest first.
    expect(f.order([msg('many', 5), msg('many', 4)]).map((m) => m.sentAt)).toEqual([4, 5]);
  });

  it('serves a quiet tenant first beside a noisy one', () => {
    const c = clock();
    const f = new FairQueueState(c.now);
    f.start(Array(10).fill('g:slow'));
    c.advance(5000);
    expect(f.noisy()).toEqual(new Set(['g:slow']));
    expect(f.order([msg('slow', 1), msg('slow', 2), msg('fast', 3), msg(undefined, 4, 'x')]).map((m) => m.group ?? 'none')).toEqual(['fast', 'none', 'slow', 'slow']);
  });

  it('forgets processing time older than the recent window', () => {
    const c = clock();
    const f = new FairQueueState(c.now);
    const at = f.start(['g:slow']);
    c.advance(5000);
    f.finish(['g:slow'], at);
    expect(f.noisy().has('g:slow')).toBe(true);
    c.advance(RECENT_MS + 1);
    expect(f.noisy().size).toBe(0);
  });

  it('treats each message without a group as a tenant of its own', () => {
    const f = new FairQueueState(clock().now);
    expect(f.tenantOf(msg(undefined, 1, 'a'))).not.toBe(f.tenantOf(msg(undefined, 1, 'b')));
    expect(f.tenantOf(msg('n', 1, 'a'))).toBe(f.tenantOf(msg('n', 2, 'b')));
  });
});
