/**
 * Quotas per namespace on held messages (count and bytes) and on schedule runs per minute, set
 * with the admin CLI like the other caps, refused with 409 LIMIT_EXCEEDED (DynamoDB Local and
 * fauxqs, the real tick with a clock moved forward).
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { queueApi, unique } from '../fixtures/queues';
import { afterIndexLag } from '../fixtures/harsh-waits';
import { tick as runTick } from '../../lambda/schedules/tick';
import { run } from '../../bin/admin';

jest.setTimeout(90_000);

const HOUR = 3600;
const tick = async (now: number) => {
  await afterIndexLag();
  return runTick(now);
};

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

async function admin(...args: string[]) {
  const out: string[] = [];
  const io = { out: (l: string) => out.push(l), err: () => undefined, env: process.env };
  const code = await run([...args, '--json'], io as never);
  return { code, out: out.join('') };
}

async function setUp() {
  const ns = await createTestNamespace('hq');
  const call = client(server.baseUrl, ns.key);
  const q = queueApi(call);
  const { name: queue, topic } = await q.createOnOwnTopic();
  return { ns, call, q, queue, topic };
}

it('refuses a publish that would hold more messages than the namespace may (409), counts short delays out, and frees room on cancel and handover', async () => {
  const { ns, call, q, topic } = await setUp();
  expect((await admin('resource-limit', 'set', ns.name, 'held-messages', '3')).code).toBe(0);
  const batch = await q.publishBatch(topic, [1, 2, 3].map((i) => ({ payload: `m${i}`, delay_seconds: 2 * HOUR })));
  const over = await call('POST', `/topics/${topic}/messages`, { payload: 'four', delay_seconds: 2 * HOUR });
  expect(over.status).toBe(409);
  expect(over.body.error).toMatchObject({ code: 'LIMIT_EXCEEDED', details: { resource: 'held-messages', limit: 3 } });
  // Not held: SQS's own delay.
  await q.publish(topic, { payload: 'short', delay_seconds: 60 });
  expect((await call('DELETE', `/messages/${batch.message_ids[0]}/delivery`)).status).toBe(200);
  await q.publish(topic, { payload: 'four', delay_seconds: 2 * HOUR });
  expect((await call('POST', `/topics/${topic}/messages`, { payload: 'five', delay_seconds: 2 * HOUR })).status).toBe(409);
  // Handed over: the room is free again.
  await tick(Date.parse(batch.timestamp) + 2 * HOUR * 1000 + 5000);
  await q.publishBatch(topic, [1, 2, 3].map((i) => ({ payload: `n${i}`, delay_seconds: 3 * HOUR })));
  const got = JSON.parse((await admin('resource-limit', 'get', ns.name)).out);
  expect(got).toMatchObject({ limits: { 'held-messages': 3 }, held: { messages: 3 } });
});

it('refuses a publish that would hold more bytes than the namespace may (409)', async () => {
  const { ns, call, q, topic } = await setUp();
  expect((await admin('resource-limit', 'set', ns.name, 'held-bytes', '1000')).code).toBe(0);
  await q.publish(topic, { payload: 'x'.repeat(600), delay_seconds: 2 * HOUR });
  const over = await call('POST', `/topics/${topic}/messages`, { payload: 'y'.repeat(600), delay_seconds: 2 * HOUR });
  expect(over.status).toBe(409);
  expect(over.body.error).toMatchObject({ code: 'LIMIT_EXCEEDED', details: { resource: 'held-bytes', limit: 1000 } });
  await q.publish(topic, { payload: 'z'.repeat(400), delay_seconds: 2 * HOUR });
});

it('makes at most the namespace\'s schedule runs per minute, the others at the next minute within their window', async () => {
  const { ns, call, topic } = await setUp();
  expect((await admin('resource-limit', 'set', ns.name, 'schedule-runs-per-minute', '1')).code).toBe(0);
  const made = await Promise.all([unique('sa'), unique('sb')].map(async (name) => (await call('POST', '/schedules', { name, every: 3600, topic, payload: 'p' })).body.data));
  const last = Math.max(...made.map((s: { next_run_at: string }) => Date.parse(s.next_run_at)));
  await tick(last + 500);
  const views = async () => Promise.all(made.map(async (s: { name: string }) => (await call('GET', `/schedules/${s.name}`)).body.data));
  expect((await views()).filter((v) => v.last_message_id !== null)).toHaveLength(1);
  await tick(last + 60_500);
  for (const v of await views()) expect(v).toMatchObject({ last_error: null, last_message_id: expect.any(String) });
});

it('rejects a quota that is not a whole number', async () => {
  const { ns } = await setUp();
  expect((await admin('resource-limit', 'set', ns.name, 'held-bytes', 'lots')).code).toBe(2);
});
