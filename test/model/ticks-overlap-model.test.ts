/**
 * Overlapping scheduler ticks (docs/design/0016-schedule-runs.md) on the local engines: random
 * batches of ticks running at once, with the same clock or different clocks (as when one invocation
 * runs late and the next starts), over held messages and an `every` schedule on one queue.
 * Invariants, checked by a consumer that receives and acks everything:
 * - every held message is delivered exactly once (no tick crashes here, so no retry duplicate);
 * - every schedule run is published exactly once: no scheduled time twice, each on the
 *   schedule's grid and not after the latest clock a tick ran with;
 * - the schedule's `last_run_at` and `last_message_id` name the latest run published.
 * FC_SEED / FC_RUNS replay or run more.
 */
import fc from 'fast-check';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { queueApi, unique } from '../fixtures/queues';
import { tick } from '../../lambda/schedules/tick';
import { afterIndexLag } from '../fixtures/harsh-waits';

jest.setTimeout(900_000);

const HOUR = 3600_000;
let server: TestServer;
let q: ReturnType<typeof queueApi>;
let call: ReturnType<typeof client>;
beforeAll(async () => {
  server = await startTestServer();
  const ns = await createTestNamespace('to');
  call = client(server.baseUrl, ns.key);
  q = queueApi(call);
});
afterAll(() => server.close());

/**
 * A tick's clock: an hour mark after the start plus a few seconds, so a held message (due on an
 * hour mark after its publish) is either outside the handover window or due within seconds of it.
 */
const clockArb = fc.record({ hour: fc.integer({ min: 0, max: 3 }), jitterMs: fc.integer({ min: 0, max: 5000 }) });
const batchArb = fc.array(clockArb, { minLength: 1, maxLength: 3 });

it('delivers each held message once and publishes each schedule run once, however ticks overlap', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 4 }), fc.array(batchArb, { minLength: 1, maxLength: 4 }), async (heldHours, batches) => {
      const name = unique('ov');
      await q.create({ name, topic_filter: `${name}/#` });
      const t0 = Date.now();
      const sched = unique('every');
      const created = await call('POST', '/schedules', { name: sched, every: 60, topic: `${name}/sched`, payload: '{"t":"{{.scheduled_time}}"}' });
      expect(created.status).toBe(201);
      const first = Date.parse(created.body.data.next_run_at);
      const held = new Set<string>();
      for (const h of heldHours) held.add((await q.publish(`${name}/held`, { payload: 'held', delay_seconds: h * 3600 })).message_id);

      let latest = 0;
      for (const batch of batches) {
        await afterIndexLag();
        const clocks = batch.map((c) => t0 + c.hour * HOUR + c.jitterMs);
        latest = Math.max(latest, ...clocks);
        await Promise.all(clocks.map((c) => tick(c)));
      }
      // Everything comes due (with the same and a later clock at once).
      await afterIndexLag();
      const last = t0 + 4 * HOUR;
      await Promise.all([tick(last), tick(last), tick(last + 30_000)]);
      latest = last + 30_000;

      const got: { id: string; payload: string }[] = [];
      const deadline = Date.now() + 90_000;
      for (let empty = 0; empty < 2 && Date.now() < deadline; ) {
        const ms = await q.consume(name, { timeout_seconds: 1, max_messages: 10 });
        const missing = [...held].some((id) => !got.some((g) => g.id === id));
        if (!ms.length && !missing) empty++;
        for (const m of ms) {
          got.push({ id: m.message_id, payload: m.payload });
          expect((await q.ack(name, m.message_id, m.receipt_handle)).status).toBe(200);
        }
      }
      const heldGot = got.filter((g) => held.has(g.id)).map((g) => g.id);
      expect(heldGot.sort()).toEqual([...held].sort());

      const runs = got.filter((g) => !held.has(g.id)).map((g) => ({ id: g.id, t: Date.parse((JSON.parse(g.payload) as { t: string }).t) }));
      expect(runs.length).toBeGreaterThanOrEqual(1);
      expect(new Set(runs.map((r) => r.t)).size).toBe(runs.length);
      for (const r of runs) {
        expect((r.t - first) % 60_000).toBe(0);
        expect(r.t).toBeGreaterThanOrEqual(first);
        expect(r.t).toBeLessThanOrEqual(latest);
      }
      const newest = runs.reduce((a, b) => (b.t > a.t ? b : a));
      const s = (await call('GET', `/schedules/${sched}`)).body.data;
      expect(s).toMatchObject({ last_run_at: new Date(newest.t).toISOString(), last_message_id: newest.id, last_error: null });
      expect((await call('DELETE', `/schedules/${sched}`)).status).toBe(200);
    }),
    { seed: Number(process.env.FC_SEED ?? 2021), numRuns: Number(process.env.FC_RUNS ?? 3) },
  );
});
