/**
 * Every way a stream or subscription consume ends closes the watch of its log's arrivals
 * (lambda/logs/storage/log-arrivals.ts `watchArrivals`): answers, timeouts, refusals after the
 * head's read, a log deleted while it waits, the subscription's answer deadline, a storage error
 * in the middle. Many consumes leave no listener on the arrivals' bus and no timer behind.
 */
import { EventEmitter } from 'node:events';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { namespaceTestbed } from '../fixtures/testbed';
import { logApi, streamBinding, subscriptionBinding, uniq } from '../fixtures/logs';
import { ddb } from '../../lambda/core/storage/client';
import { consumeStream } from '../../lambda/streams/operations';
import { consumeSubscription } from '../../lambda/subscriptions/operations';
import { afterIndexLag } from '../fixtures/harsh-waits';
import { until } from '../fixtures/receiver';

jest.setTimeout(120_000);

const { ns, call } = namespaceTestbed('watchclose');
const logs = logApi(call);
afterEach(() => jest.restoreAllMocks());

/** The arrivals' bus, caught as a watch of log `id` starts listening on it. */
async function busOf(id: string, start: () => Promise<unknown>): Promise<EventEmitter> {
  let bus: EventEmitter | undefined;
  const on = EventEmitter.prototype.on;
  const spy = jest.spyOn(EventEmitter.prototype, 'on').mockImplementation(function (this: EventEmitter, event: unknown, listener: (...a: unknown[]) => void) {
    if (event === id) bus = this;
    return on.call(this, event as string, listener);
  });
  try {
    await start();
  } finally {
    spy.mockRestore();
  }
  if (!bus) throw new Error(`no watch of ${id} started`);
  return bus;
}

const settle = async <T>(p: Promise<T>) => p.then(() => 'ok', (e: { status?: number; name?: string }) => String(e.status ?? e.name));
const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

it('stream consumes close their watch however they end', async () => {
  const { name, topic } = await logs.stream({ partition_count: 2 });
  const { s } = await streamBinding(ns.name, name);
  await logs.publish(topic, { payload: 'one' });
  await afterIndexLag();
  const consume = (opts: Record<string, unknown>) => consumeStream(ns.name, name, { consumer_group: 'g', start_offset: 'earliest', max_messages: 10, timeout_seconds: 0, ...opts } as never);
  const bus = await busOf(s.id, () => consume({}));
  const before = timers();
  const outcomes = new Map<string, number>();
  const count = (o: string) => outcomes.set(o, (outcomes.get(o) ?? 0) + 1);
  // Each round checks the bus, so a listener left behind shows in the round that left it: a few
  // rounds of each ending (100 took about 2 minutes of the suite's busiest lane for nothing more).
  for (let i = 0; i < 10; i++) {
    count(await settle(consume({ start_offset: 'latest' })));
    count(await settle(consume({ partition: 5 })));
    count(await settle(consume({ start_offset: 1_000 })));
    expect(bus.listenerCount(s.id)).toBe(0);
  }
  // A storage error in the middle: the group's read fails, after the watch began.
  const c = ddb();
  const send = c.send.bind(c);
  jest.spyOn(c, 'send').mockImplementation(((cmd: unknown, ...rest: unknown[]) => {
    if (cmd instanceof GetCommand && String(cmd.input.Key?.sk).includes('GROUP')) return Promise.reject(Object.assign(new Error('boom'), { name: 'InternalServerError' }));
    return (send as (x: unknown, ...r: unknown[]) => Promise<unknown>)(cmd, ...rest);
  }) as never);
  for (let i = 0; i < 5; i++) count(await settle(consume({ start_offset: undefined, consumer_group: uniq('g') })));
  jest.restoreAllMocks();
  // A long poll of a stream deleted while it waits.
  const waiting = settle(consume({ start_offset: 'latest', timeout_seconds: 5 }));
  // Waiting (its wait is 5 s): reached its watch, on a loaded machine later than at once.
  await until(async () => bus.listenerCount(s.id) === 1, 4_000, 'the waiting consume to watch its log');
  await call('DELETE', `/streams/${name}`, undefined);
  count(await waiting);
  count(await settle(consume({})));
  expect(bus.listenerCount(s.id)).toBe(0);
  expect(bus.eventNames()).not.toContain(s.id);
  // The timers of the consumes' waits are cleared (other code's, the SDK's, may be pending for a moment).
  await until(async () => timers() <= before, 3_000, `the active timers back to ${before}`);
  // Every way of ending was met: answers, refusals after the head's read, the storage error, the 404.
  expect([...outcomes.keys()].sort()).toEqual(['404', '422', 'InternalServerError', 'ok']);
});

it('subscription consumes close their watch however they end', async () => {
  const { name, topic } = await logs.subscription();
  const { s } = await subscriptionBinding(ns.name, name);
  await logs.publish(topic, { payload: 'one' });
  await afterIndexLag();
  const consume = (opts: Record<string, unknown>) => consumeSubscription(ns.name, name, { subscriber_id: uniq('w'), max_messages: 10, timeout_seconds: 0, ...opts } as never);
  const bus = await busOf(s.id, () => consume({}));
  const outcomes = new Map<string, number>();
  const count = (o: string) => outcomes.set(o, (outcomes.get(o) ?? 0) + 1);
  for (let i = 0; i < 10; i++) {
    count(await settle(consume({})));
    // The answer deadline passed at once: cut off.
    count(await settle(consume({ timeout_seconds: 2, deadlineMs: Date.now() + 5 })));
    expect(bus.listenerCount(s.id)).toBe(0);
  }
  await consume({ subscriber_id: 'w' }); // past the message: the next consume of 'w' waits
  const waiting = settle(consume({ subscriber_id: 'w', timeout_seconds: 5 }));
  // Waiting (its wait is 5 s): reached its watch, on a loaded machine later than at once.
  await until(async () => bus.listenerCount(s.id) === 1, 4_000, 'the waiting consume to watch its log');
  await call('DELETE', `/subscriptions/${name}`, undefined);
  count(await waiting);
  count(await settle(consume({})));
  expect(bus.listenerCount(s.id)).toBe(0);
  // Answers, cut-offs at the answer deadline (a TimeoutError, answered 503), the 404.
  expect([...outcomes.keys()].sort()).toEqual(['404', 'TimeoutError', 'ok']);
});
