/**
 * Schedules (docs/schedules.md) through the real local gateway on DynamoDB Local and fauxqs; the
 * real tick is called with the clock at a schedule's run times instead of waiting for them.
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { queueApi, unique } from '../fixtures/queues';
import { tick as runTick } from '../../lambda/schedules/tick';
import { afterIndexLag } from '../fixtures/harsh-waits';
import { run } from '../../bin/admin';

/** The real tick, once what it reads through the due index is visible there (the index lags, as in AWS). */
const tick = async (now: number) => {
  await afterIndexLag();
  return runTick(now);
};

jest.setTimeout(60_000);

let server: TestServer;
let call: ReturnType<typeof client>;
let q: ReturnType<typeof queueApi>;
let ns: Awaited<ReturnType<typeof createTestNamespace>>;

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('sc');
  call = client(server.baseUrl, ns.key);
  q = queueApi(call);
});
afterAll(() => server.close());

const queueWithTopic = () => q.createOnOwnTopic();

async function createSchedule(body: Record<string, unknown>) {
  const res = await call('POST', '/schedules', body);
  expect(res.status).toBe(201);
  return res.body.data;
}

describe('schedule configuration', () => {
  it('creates, gets, lists with a cursor, replaces, patches and deletes', async () => {
    const prefix = unique('crud');
    const a = await createSchedule({ name: `${prefix}-a`, cron: '0 9 * * 1-5', timezone: 'Europe/Paris', topic: 'reports/daily', payload: 'report {{.scheduled_time}}' });
    expect(a).toMatchObject({ name: `${prefix}-a`, cron: '0 9 * * 1-5', timezone: 'Europe/Paris', enabled: true, last_run_at: null, last_message_id: null, last_error: null });
    // 09:00 in Paris is 07:00 or 08:00 UTC.
    expect(['07', '08']).toContain(a.next_run_at.slice(11, 13));
    await createSchedule({ name: `${prefix}-b`, every: 3600, topic: 'x', payload: 'p' });
    await createSchedule({ name: `${prefix}-c`, every: 60, topic: 'x', payload: 'p', enabled: false });

    const got = await call('GET', `/schedules/${prefix}-c`);
    expect(got.body.data).toMatchObject({ every: 60, enabled: false, next_run_at: null });

    const names: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { data: { schedules: { name: string }[]; next_cursor: string | null } } } = await call('GET', `/schedules?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      names.push(...page.body.data.schedules.map((s) => s.name));
      cursor = page.body.data.next_cursor;
    } while (cursor);
    expect(names.filter((n) => n.startsWith(prefix))).toEqual([`${prefix}-a`, `${prefix}-b`, `${prefix}-c`]);

    const put = await call('PUT', `/schedules/${prefix}-b`, { every: 120, topic: 'y', payload: 'q' });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ every: 120, topic: 'y', timezone: 'UTC' });
    const patch = await call('PATCH', `/schedules/${prefix}-b`, { cron: '*/5 * * * *' });
    expect(patch.body.data).toMatchObject({ cron: '*/5 * * * *', topic: 'y' });
    expect(patch.body.data).not.toHaveProperty('every');
    expect((await call('DELETE', `/schedules/${prefix}-b`)).status).toBe(200);
    expect((await call('GET', `/schedules/${prefix}-b`)).status).toBe(404);
    expect((await call('DELETE', `/schedules/${prefix}-b`)).body.error?.code).toBe('SCHEDULE_NOT_FOUND');
  });

  it('validates like every resource: 422 naming the field, 400 for a wrong type, 409 for a taken name', async () => {
    const name = unique('v');
    const bad = async (body: Record<string, unknown>, status: number, field?: string) => {
      const res = await call('POST', '/schedules', { name, topic: 't', payload: 'p', ...body });
      expect(res.status).toBe(status);
      if (field) expect((res.body.error?.details.fields as { field: string }[]).map((f) => f.field)).toContain(field);
    };
    await bad({}, 422, 'cron');
    await bad({ cron: '* * * *' }, 422, 'cron');
    await bad({ cron: '61 * * * *' }, 422, 'cron');
    await bad({ cron: '* * * * *', every: 60 }, 422, 'every');
    await bad({ every: 59 }, 422, 'every');
    await bad({ every: '60' }, 400);
    await bad({ every: 60, timezone: 'Mars/Olympus' }, 422, 'timezone');
    await bad({ every: 60, topic: 'a//b' }, 422, 'topic');
    await bad({ every: 60, start_at: 'soon' }, 422, 'start_at');
    await bad({ every: 60, start_at: '2030-01-02T00:00:00Z', end_at: '2030-01-01T00:00:00Z' }, 422, 'end_at');
    await bad({ every: 60, enabled: 'yes' }, 400);
    await bad({ every: 60, properties: { n: 5 } }, 400);
    await bad({ every: 60, name: undefined }, 422, 'name');
    await createSchedule({ name, every: 60, topic: 't', payload: 'p' });
    expect((await call('POST', '/schedules', { name, every: 60, topic: 't', payload: 'p' })).status).toBe(409);
    expect((await call('PUT', `/schedules/${name}`, { name: 'other', every: 60, topic: 't', payload: 'p' })).status).toBe(422);
  });

  it('needs the manage scope to write and read to list', async () => {
    const pub = client(server.baseUrl, ns.keys.publish);
    expect((await pub('POST', '/schedules', { name: unique('s'), every: 60, topic: 't', payload: 'p' })).status).toBe(403);
    expect((await pub('GET', '/schedules')).status).toBe(200);
  });

  it('refuses a create beyond the namespace limit set by the admin CLI', async () => {
    const small = await createTestNamespace('sl');
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l), env: process.env };
    expect(await run(['schedule-limit', 'set', small.name, '1', '--json'], io as never)).toBe(0);
    expect(JSON.parse(out.join(''))).toMatchObject({ namespace: small.name, schedule_limit: 1, schedules: 0 });
    expect(await run(['schedule-limit', 'set', small.name, 'many'], io as never)).toBe(2);
    const c = client(server.baseUrl, small.key);
    expect((await c('POST', '/schedules', { name: 'one', every: 60, topic: 't', payload: 'p' })).status).toBe(201);
    const two = await c('POST', '/schedules', { name: 'two', every: 60, topic: 't', payload: 'p' });
    expect(two.status).toBe(409);
    expect(two.body.error?.code).toBe('SCHEDULE_LIMIT_EXCEEDED');
    expect((await c('DELETE', '/schedules/one')).status).toBe(200);
    expect((await c('POST', '/schedules', { name: 'two', every: 60, topic: 't', payload: 'p' })).status).toBe(201);
  });
});

describe('runs', () => {
  it('publishes exactly one message per scheduled time through the publish path, with placeholders, even when ticks overlap or repeat', async () => {
    const { name: queue, topic } = await queueWithTopic();
    const name = unique('run');
    const s = await createSchedule({ name, every: 60, topic, payload: '{"at":"{{.scheduled_time}}","by":"{{ .schedule }}"}', properties: { src: '{{.schedule}}' } });
    const t1 = Date.parse(s.next_run_at);
    // Three ticks at the run time at once, then one more: one message.
    await Promise.all([tick(t1), tick(t1), tick(t1 + 500)]);
    await tick(t1 + 1000);
    const got = await q.consume(queue, { timeout_seconds: 2, max_messages: 10 });
    expect(got).toHaveLength(1);
    expect(JSON.parse(got[0].payload)).toEqual({ at: new Date(t1).toISOString(), by: name });
    expect(got[0].properties).toMatchObject({ src: name });
    const after = (await call('GET', `/schedules/${name}`)).body.data;
    expect(after).toMatchObject({ last_run_at: new Date(t1).toISOString(), last_message_id: got[0].message_id, last_error: null, next_run_at: new Date(t1 + 60_000).toISOString() });
    expect(await q.consume(queue, { timeout_seconds: 1 })).toEqual([]);
  });

  it('after an outage makes the first missed time once, skips (and records) the times beyond the 5-minute bound, and makes those within it', async () => {
    const { name: queue, topic } = await queueWithTopic();
    const name = unique('outage');
    const s = await createSchedule({ name, every: 60, topic, payload: '{{.scheduled_time}}' });
    const t1 = Date.parse(s.next_run_at);
    // Ten minutes of missed runs: t1 .. t1 + 10 min. Within 5 minutes of `back`: t1 + 6 .. t1 + 10 min.
    const back = t1 + 10 * 60_000 + 5_000;
    await tick(back);
    await tick(back + 1000);
    const got = await q.consume(queue, { timeout_seconds: 2, max_messages: 10 });
    const minutes = got.map((m) => (Date.parse(m.payload) - t1) / 60_000).sort((a, b) => a - b);
    expect(minutes).toEqual([0, 6, 7, 8, 9, 10]);
    const after = (await call('GET', `/schedules/${name}`)).body.data;
    expect(after.last_run_at).toBe(new Date(t1 + 10 * 60_000).toISOString());
    expect(after.last_skipped).toEqual({ from: new Date(t1 + 60_000).toISOString(), until: new Date(t1 + 6 * 60_000).toISOString() });
    expect(Date.parse(after.next_run_at)).toBe(t1 + 11 * 60_000);
  });

  it('records a publish that nothing binds as the run\'s last_error and moves on', async () => {
    const name = unique('nobody');
    const s = await createSchedule({ name, every: 60, topic: `${name}/unbound`, payload: 'lost' });
    const t1 = Date.parse(s.next_run_at);
    await tick(t1);
    const after = (await call('GET', `/schedules/${name}`)).body.data;
    expect(after.last_error).toMatch(/TOPIC_NOT_FOUND/);
    expect(after.last_message_id).toBeNull();
    expect(Date.parse(after.next_run_at)).toBe(t1 + 60_000);
  });

  it('does not run a disabled schedule, and ends after end_at', async () => {
    const { name: queue, topic } = await queueWithTopic();
    const name = unique('off');
    const s = await createSchedule({ name, every: 60, topic, payload: 'x' });
    const t1 = Date.parse(s.next_run_at);
    expect((await call('PATCH', `/schedules/${name}`, { enabled: false })).body.data.next_run_at).toBeNull();
    await tick(t1 + 1000);
    expect(await q.consume(queue, { timeout_seconds: 1 })).toEqual([]);
    const on = (await call('PATCH', `/schedules/${name}`, { enabled: true })).body.data;
    const t2 = Date.parse(on.next_run_at);
    // The last run is t2 itself.
    expect((await call('PATCH', `/schedules/${name}`, { end_at: on.next_run_at })).body.data.next_run_at).toBe(on.next_run_at);
    await tick(t2);
    expect(await q.consume(queue, { timeout_seconds: 2 })).toHaveLength(1);
    expect((await call('GET', `/schedules/${name}`)).body.data.next_run_at).toBeNull();
  });
});
