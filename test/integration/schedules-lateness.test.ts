/**
 * Schedule runs against late ticks, retryable refusals and changes while a run is due, through
 * the scheduler Lambda handler with a clock of the test's (lambda/core/rules/clock.ts) on DynamoDB
 * Local and fauxqs: exactly one run per scheduled time within the lateness bound.
 */
import type { Context } from 'aws-lambda';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { queueApi, unique } from '../fixtures/queues';
import { afterIndexLag } from '../fixtures/harsh-waits';
import { schedulerHandler } from '../../lambda/handlers/scheduler';
import type { TickStats } from '../../lambda/schedules/tick';
import { updateScheduleOp } from '../../lambda/schedules/operations';
import { patched, toScheduleConfig } from '../../lambda/schedules/rules/schedules';

jest.setTimeout(90_000);

const context = { functionName: 'scheduler', awsRequestId: 'test', getRemainingTimeInMillis: () => 60_000 } as unknown as Context;

/** The scheduler Lambda as if it were `now`, once the due index shows what was written. */
async function tickAt(now: number): Promise<TickStats> {
  await afterIndexLag();
  return (await schedulerHandler({ clock: { now: () => now } })({}, context)) as TickStats;
}

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

async function setUp(limits?: { publish: number; fanout?: number }) {
  const ns = await createTestNamespace('sl', limits && { ...limits, consume: 1_000_000, management: 1_000_000 });
  const call = client(server.baseUrl, ns.key);
  const q = queueApi(call);
  const { name: queue, topic } = await q.createOnOwnTopic();
  const create = async (body: Record<string, unknown>) => {
    const res = await call('POST', '/schedules', { topic, payload: '{{.scheduled_time}}', ...body });
    expect(res.status).toBe(201);
    return res.body.data as { name: string; next_run_at: string };
  };
  /** Payloads of every message the queue holds (each consumed once and acked), sorted. */
  const payloads = async () => {
    const out: string[] = [];
    for (;;) {
      const got = await q.consume(queue, { timeout_seconds: 1, max_messages: 10 });
      if (!got.length) return out.sort();
      for (const m of got) {
        out.push(m.payload);
        await q.ack(queue, m.message_id, m.receipt_handle);
      }
    }
  };
  /** Scheduled times of those messages (the payload is `{{.scheduled_time}}`). */
  const times = async () => (await payloads()).map((p) => Date.parse(p)).sort((a, b) => a - b);
  return { ns, call, create, times, payloads };
}

it('makes every time of an every-60 schedule whose ticks come up to a period late (60, 120, 180, 240)', async () => {
  const { create, times } = await setUp();
  const s = await create({ name: unique('late'), every: 60 });
  const origin = Date.parse(s.next_run_at) - 60_000;
  for (const at of [59.5, 120.5, 180.2, 240.1]) await tickAt(origin + at * 1000);
  expect((await times()).map((t) => (t - origin) / 1000)).toEqual([60, 120, 180, 240]);
});

it('retries a run refused with a retryable answer (the publish budget spent) at the next tick, with its own scheduled time', async () => {
  // One publish a minute: of two schedules due in the same tick, one is refused RATE_LIMIT_EXCEEDED.
  const { call, create, times } = await setUp({ publish: 1 });
  const a = await create({ name: unique('ra'), every: 3600 });
  const b = await create({ name: unique('rb'), every: 3600 });
  const due = [Date.parse(a.next_run_at), Date.parse(b.next_run_at)];
  await tickAt(Math.max(...due) + 500);
  const views = await Promise.all([a, b].map(async (s) => (await call('GET', `/schedules/${s.name}`)).body.data));
  expect(views.filter((v) => v.last_message_id !== null)).toHaveLength(1);
  await tickAt(Math.max(...due) + 60_500);
  expect(await times()).toEqual([...due].sort((x, y) => x - y));
  for (const s of [a, b]) {
    const got = (await call('GET', `/schedules/${s.name}`)).body.data;
    expect(got).toMatchObject({ last_error: null, last_run_at: s.next_run_at, next_run_at: new Date(Date.parse(s.next_run_at) + 3600_000).toISOString() });
  }
});

it('retries a run the fan-out budget refused (writes per minute its publishes cause) at the next tick, within its window', async () => {
  // One write a minute: of two schedules due in the same tick (one queue each), one is refused.
  const { call, create, times } = await setUp({ publish: 1_000_000, fanout: 1 });
  const a = await create({ name: unique('fa'), every: 3600 });
  const b = await create({ name: unique('fb'), every: 3600 });
  const due = [Date.parse(a.next_run_at), Date.parse(b.next_run_at)];
  await tickAt(Math.max(...due) + 500);
  const views = await Promise.all([a, b].map(async (s) => (await call('GET', `/schedules/${s.name}`)).body.data));
  expect(views.filter((v) => v.last_message_id !== null)).toHaveLength(1);
  await tickAt(Math.max(...due) + 60_500);
  expect(await times()).toEqual([...due].sort((x, y) => x - y));
  for (const s of [a, b]) expect((await call('GET', `/schedules/${s.name}`)).body.data).toMatchObject({ last_error: null, last_run_at: s.next_run_at });
});

it('records a retryable refusal as the run\'s error once the run\'s window is out, and moves on', async () => {
  const { call, create, times } = await setUp({ publish: 1 });
  const made = await Promise.all([unique('ga'), unique('gb'), unique('gc')].map((name) => create({ name, every: 3600 })));
  const last = Math.max(...made.map((s) => Date.parse(s.next_run_at)));
  await tickAt(last + 500);
  // Six minutes later (past the five-minute bound): one more is published, the third gives up.
  await tickAt(last + 6 * 60_000);
  expect(await times()).toHaveLength(2);
  const views = await Promise.all(made.map(async (s) => (await call('GET', `/schedules/${s.name}`)).body.data));
  const failed = views.filter((v) => v.last_error !== null);
  expect(failed).toHaveLength(1);
  expect(failed[0].last_error).toMatch(/^RATE_LIMIT_EXCEEDED/);
  for (const v of views) expect(Date.parse(v.next_run_at)).toBeGreaterThan(last + 3000_000);
});

it('keeps a run that is due but not yet made through a PATCH and a PUT (which uses the new configuration)', async () => {
  const { ns, call, create, payloads } = await setUp();
  const s = await create({ name: unique('keep'), every: 3600 });
  const t1 = Date.parse(s.next_run_at);
  const patchedView = await updateScheduleOp(ns.name, s.name, (stored) => toScheduleConfig(patched(stored.config, { payload: 'changed {{.scheduled_time}}' })), t1 + 5_000);
  expect(patchedView.next_run_at).toBe(s.next_run_at);
  const putView = await updateScheduleOp(ns.name, s.name, (stored) => toScheduleConfig({ ...patched(stored.config, {}), every: 7200 }), t1 + 6_000);
  expect(putView.next_run_at).toBe(s.next_run_at);
  await tickAt(t1 + 7_000);
  // The run used the configuration of its tick, with its own scheduled time.
  expect(await payloads()).toEqual([`changed ${s.next_run_at}`]);
  const after = (await call('GET', `/schedules/${s.name}`)).body.data;
  expect(after).toMatchObject({ last_run_at: s.next_run_at, last_error: null });
  // The new timing counts from its change (t1 + 6 s), not from the old origin.
  expect(after.next_run_at).toBe(new Date(t1 + 6_000 + 7200_000).toISOString());
});
