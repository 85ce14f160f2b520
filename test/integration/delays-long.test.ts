/**
 * Long delays and cancel (docs/schedules.md) through the real local gateway on DynamoDB
 * Local and fauxqs. The scheduler tick is the real one (lambda/schedules/tick.ts), called with a
 * time in the future instead of waiting hours: the engines are never mocked, only the tick's
 * clock moves.
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { queueApi, unique } from '../fixtures/queues';
import { tick as runTick } from '../../lambda/schedules/tick';
import { afterIndexLag } from '../fixtures/harsh-waits';
import { HANDOVER_WINDOW_MS } from '../../lambda/core/rules/delays';

/** The real tick, once what it reads through the due index is visible there (the index lags, as in AWS). */
const tick = async (now: number) => {
  await afterIndexLag();
  return runTick(now);
};

jest.setTimeout(60_000);

const HOUR = 3600;
let server: TestServer;
let call: ReturnType<typeof client>;
let q: ReturnType<typeof queueApi>;

beforeAll(async () => {
  server = await startTestServer();
  const ns = await createTestNamespace('dl');
  call = client(server.baseUrl, ns.key);
  q = queueApi(call);
});
afterAll(() => server.close());

const queueWithTopic = () => q.createOnOwnTopic();

/** Long-polls until `n` messages came (or 10 s passed without one). */
async function receive(name: string, n: number) {
  const got: { payload: string; message_id: string; at: number }[] = [];
  while (got.length < n) {
    const ms = await q.consume(name, { timeout_seconds: 10, max_messages: 10 });
    if (!ms.length) throw new Error(`no message within 10 s (${got.length} of ${n})`);
    for (const m of ms) got.push({ payload: m.payload, message_id: m.message_id, at: Date.now() });
  }
  return got;
}

describe('a delay beyond 900 s', () => {
  it('holds the message (counted in message_count, invisible), and a tick hands it over once it is due within 14 minutes', async () => {
    const { name, topic } = await queueWithTopic();
    const t0 = Date.now();
    const { message_id } = await q.publish(topic, { payload: 'in an hour', delay_seconds: HOUR });
    expect((await q.get(name)).message_count).toBe(1);
    expect(await q.consume(name)).toEqual([]);

    // Not yet within the window: nothing moves.
    await tick(t0 + HOUR * 1000 - HANDOVER_WINDOW_MS - 60_000);
    expect(await q.consume(name)).toEqual([]);

    // Due: handed over with DelaySeconds 0, exactly once even when ticks repeat.
    const stats = await tick(t0 + HOUR * 1000);
    expect(stats.delayed.handed).toBeGreaterThanOrEqual(1);
    const [m] = await receive(name, 1);
    expect(m).toMatchObject({ payload: 'in an hour', message_id });
    await tick(t0 + HOUR * 1000 + 1000);
    expect(await q.consume(name, { timeout_seconds: 1 })).toEqual([]);
    expect((await q.get(name)).message_count).toBe(1);
  });

  it('hands over with the rest of the delay as SQS DelaySeconds, so the message appears at its second (±1 s)', async () => {
    const { name, topic } = await queueWithTopic();
    const deliverAt = Date.now() + 2 * HOUR * 1000;
    await q.publish(topic, { payload: 'at a time', deliver_at: new Date(deliverAt).toISOString() });
    // The tick runs as if 3 s before the due time: SQS holds it 3 s more.
    // (The tick sends somewhere between its start and its end; both bound the arrival.)
    const tickStart = Date.now();
    await tick(deliverAt - 3000);
    const tickEnd = Date.now();
    const [m] = await receive(name, 1);
    expect(m.payload).toBe('at a time');
    expect(m.at - tickStart).toBeGreaterThanOrEqual(3000 - 1000);
    expect(m.at - tickEnd).toBeLessThanOrEqual(3000 + 1000);
  });

  it('keeps short delays in SQS and long ones held, item by item, in a batch', async () => {
    const { name, topic } = await queueWithTopic();
    const t0 = Date.now();
    await q.publishBatch(topic, [{ payload: 'now' }, { payload: 'later', delay_seconds: 2 * HOUR }]);
    const [first] = await receive(name, 1);
    expect(first.payload).toBe('now');
    expect((await q.get(name)).message_count).toBe(2);
    await tick(t0 + 2 * HOUR * 1000);
    const [second] = await receive(name, 1);
    expect(second.payload).toBe('later');
  });

  it('appends a long-delayed message to a stream at once', async () => {
    const name = unique('s');
    expect((await call('POST', '/streams', { name, topic_filter: `${name}/#` })).status).toBe(201);
    await q.publish(`${name}/t`, { payload: 'held for queues only', delay_seconds: 10 * HOUR });
    const s = await call('POST', `/streams/${name}/messages/consume`, { consumer_group: 'g', start_offset: 'earliest', timeout_seconds: 0 });
    expect(s.body.data.messages.map((x: { payload: string }) => x.payload)).toEqual(['held for queues only']);
  });

  it('drops (and counts) a message whose queue was deleted before it came due', async () => {
    const { name, topic } = await queueWithTopic();
    const t0 = Date.now();
    await q.publish(topic, { payload: 'orphan', delay_seconds: 3 * HOUR });
    await q.remove(name);
    // A new queue of the same name is another incarnation: it must not get the old message.
    await q.create({ name, topic_filter: `${name}/#` });
    const stats = await tick(t0 + 3 * HOUR * 1000);
    expect(stats.delayed.dropped).toBeGreaterThanOrEqual(1);
    expect(await q.consume(name, { timeout_seconds: 1 })).toEqual([]);
  });

  it('refuses both fields (422 naming deliver_at), a delay over 365 days, a malformed time, and a wrong type (400)', async () => {
    const { name, topic } = await queueWithTopic();
    const both = await call('POST', `/topics/${topic}/messages`, { payload: 'p', delay_seconds: 5, deliver_at: new Date().toISOString() });
    expect(both.status).toBe(422);
    expect(both.body.error?.details.fields).toEqual([expect.objectContaining({ field: 'deliver_at' })]);
    const far = await call('POST', `/topics/${topic}/messages/batch`, { messages: [{ payload: 'a' }, { payload: 'b', deliver_at: new Date(Date.now() + 366 * 24 * HOUR * 1000).toISOString() }] });
    expect(far.status).toBe(422);
    expect(far.body.error?.details.fields).toEqual([expect.objectContaining({ field: 'messages.1.deliver_at' })]);
    const over = await call('POST', `/topics/${topic}/messages`, { payload: 'p', delay_seconds: 365 * 24 * HOUR + 1 });
    expect(over.body.error?.details.fields).toEqual([expect.objectContaining({ field: 'delay_seconds' })]);
    expect((await call('POST', `/topics/${topic}/messages`, { payload: 'p', deliver_at: 'tomorrow' })).status).toBe(422);
    expect((await call('POST', `/topics/${topic}/messages`, { payload: 'p', deliver_at: 5 })).status).toBe(400);
    expect((await q.get(name)).message_count).toBe(0);
  });
});

describe('cancel: DELETE /messages/{message_id}/delivery', () => {
  it('cancels a held message (message_count drops, nothing is delivered) and answers a repeat the same way', async () => {
    const { name, topic } = await queueWithTopic();
    const t0 = Date.now();
    const { message_id } = await q.publish(topic, { payload: 'never', delay_seconds: 4 * HOUR });
    const res = await call('DELETE', `/messages/${message_id}/delivery`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ message_id, status: 'cancelled' });
    expect((await q.get(name)).message_count).toBe(0);
    const again = await call('DELETE', `/messages/${message_id}/delivery`);
    expect(again.status).toBe(200);
    expect(again.body.data.cancelled_at).toBe(res.body.data.cancelled_at);
    await tick(t0 + 4 * HOUR * 1000);
    expect(await q.consume(name, { timeout_seconds: 1 })).toEqual([]);
  });

  it('answers 409 once the message was handed over, and 404 for an unknown or short-delayed message', async () => {
    const { topic } = await queueWithTopic();
    const t0 = Date.now();
    const { message_id } = await q.publish(topic, { payload: 'soon', delay_seconds: 5 * HOUR });
    await tick(t0 + 5 * HOUR * 1000);
    const late = await call('DELETE', `/messages/${message_id}/delivery`);
    expect(late.status).toBe(409);
    expect(late.body.error?.code).toBe('ALREADY_DELIVERED');
    const short = await q.publish(topic, { payload: 'short', delay_seconds: 60 });
    expect((await call('DELETE', `/messages/${short.message_id}/delivery`)).status).toBe(404);
    expect((await call('DELETE', '/messages/NOPE/delivery')).body.error?.code).toBe('MESSAGE_NOT_FOUND');
  });

  it('is the namespace\'s own: another namespace cannot cancel (404)', async () => {
    const { topic } = await queueWithTopic();
    const { message_id } = await q.publish(topic, { payload: 'mine', delay_seconds: 6 * HOUR });
    const other = await createTestNamespace('dl2');
    const res = await client(server.baseUrl, other.key)('DELETE', `/messages/${message_id}/delivery`);
    expect(res.status).toBe(404);
    expect((await call('DELETE', `/messages/${message_id}/delivery`)).status).toBe(200);
  });
});
