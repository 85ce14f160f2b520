/**
 * Long delays against a reference model (docs/design/0015-long-delays-held-in-dynamodb.md), on the
 * local engines: random interleavings of held publishes, cancels and (overlapping) ticks at moving
 * clocks. Invariants: a cancelled message is never delivered, every other message is delivered once
 * it came due, none twice (no tick crashes here, so no retry duplicates), a cancel answers 200
 * exactly when no tick had handed the message over, and message_count counts the held,
 * not-cancelled messages. FC_SEED / FC_RUNS replay or run more.
 */
import fc from 'fast-check';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { queueApi, unique } from '../fixtures/queues';
import { tick } from '../../lambda/schedules/tick';
import { afterIndexLag } from '../fixtures/harsh-waits';
import { HANDOVER_WINDOW_MS } from '../../lambda/core/rules/delays';

jest.setTimeout(600_000);

let server: TestServer;
let q: ReturnType<typeof queueApi>;
let call: ReturnType<typeof client>;
beforeAll(async () => {
  server = await startTestServer();
  const ns = await createTestNamespace('dm');
  call = client(server.baseUrl, ns.key);
  q = queueApi(call);
});
afterAll(() => server.close());

type Cmd = { kind: 'publish'; hours: number } | { kind: 'cancel'; which: number } | { kind: 'tick'; hours: number; overlap: boolean };

const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  fc.record({ kind: fc.constant('publish' as const), hours: fc.integer({ min: 1, max: 6 }) }),
  fc.record({ kind: fc.constant('cancel' as const), which: fc.nat(20) }),
  fc.record({ kind: fc.constant('tick' as const), hours: fc.integer({ min: 0, max: 7 }), overlap: fc.boolean() }),
);

it('never delivers a cancelled message, delivers every other due one once, and answers cancels truthfully', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(cmd, { minLength: 3, maxLength: 8 }), async (cmds) => {
      const name = unique('m');
      await q.create({ name, topic_filter: `${name}/#` });
      const t0 = Date.now();
      const model = new Map<string, { due: number; cancelled: boolean; handed: boolean }>();
      const ids: string[] = [];
      let clock = t0;
      for (const c of cmds) {
        if (c.kind === 'publish') {
          const { message_id } = await q.publish(`${name}/t`, { payload: 'x', delay_seconds: c.hours * 3600 });
          model.set(message_id, { due: Date.now() + c.hours * 3600_000, cancelled: false, handed: false });
          ids.push(message_id);
        } else if (c.kind === 'cancel' && ids.length) {
          const id = ids[c.which % ids.length];
          const m = model.get(id) as { cancelled: boolean; handed: boolean };
          const res = await call('DELETE', `/messages/${id}/delivery`);
          if (m.handed) expect(res.status).toBe(409);
          else {
            expect(res.status).toBe(200);
            m.cancelled = true;
          }
        } else if (c.kind === 'tick') {
          clock = Math.max(clock, t0 + c.hours * 3600_000);
          // The tick finds due messages through an index that lags like AWS's: the model says a
          // tick hands over what was held before it, so it runs once the index shows that.
          await afterIndexLag();
          await Promise.all(c.overlap ? [tick(clock), tick(clock)] : [tick(clock)]);
          for (const m of model.values()) if (!m.cancelled && m.due <= clock + HANDOVER_WINDOW_MS) m.handed = true;
        }
      }
      // Everything comes due; count what arrives.
      await afterIndexLag();
      await tick(t0 + 8 * 3600_000);
      const live = [...model.entries()].filter(([, m]) => !m.cancelled).map(([id]) => id);
      const got: string[] = [];
      for (let empty = 0; empty < 2; ) {
        const ms = await q.consume(name, { timeout_seconds: 1, max_messages: 10 });
        if (!ms.length) empty++;
        got.push(...ms.map((m) => m.message_id));
      }
      expect(got.sort()).toEqual(live.sort());
      expect((await q.get(name)).message_count).toBe(live.length);
    }),
    { seed: Number(process.env.FC_SEED ?? 2020), numRuns: Number(process.env.FC_RUNS ?? 4) },
  );
});
