/**
 * A model of per-webhook limits and endpoint health (issue 22 items 1-3), checked with fast-check
 * against the local runtime with a real HTTP receiver: a webhook with random `max_in_flight`,
 * `rate_limit` and `failure_threshold`, then random phases, each switching the receiver's
 * behaviour (2xx, 5xx, too slow for the timeout, connection closed) and publishing a few
 * messages, waiting for them to end; at the end `PATCH {"enabled": true}` and a bulk replay.
 *
 * The model says: never more than `max_in_flight` requests open at the receiver; never more than
 * `rate_limit` requests starting in any 1 s window (tolerance: one request, for clock reads at
 * the window's edges); the webhook is `disabled` (reason health) after a phase exactly when the
 * deliveries that ended in failure since the last success reach `failure_threshold`, and from
 * then on no request reaches the receiver, later deliveries are counted failed; status counters
 * add up to the messages published; after re-enable and replay every message got exactly one 2xx.
 * And the circuit: once CIRCUIT_TRIP_ATTEMPTS failed attempts in a row have ended (no success
 * ended since), requests that start do not overlap (one probe at a time).
 * FC_SEED replays a run, FC_RUNS runs more (default 4, bounded for npm test).
 */
import { createServer, type Server } from 'node:http';
import fc from 'fast-check';
import { until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { CIRCUIT_TRIP_ATTEMPTS } from '../../lambda/domain/endpoint-health';

const RUNS = Number(process.env.FC_RUNS ?? 4);
const SEED = Number(process.env.FC_SEED ?? 22033);
jest.setTimeout(60_000 + RUNS * 90_000);

const bed = webhookTestbed('whhealth');

type Behaviour = '2xx' | '5xx' | 'slow' | 'close';

interface Scenario {
  maxInFlight: number | null;
  rateLimit: number | null;
  failureThreshold: number;
  phases: { behaviour: Behaviour; messages: number }[];
}

const scenario: fc.Arbitrary<Scenario> = fc.record({
  maxInFlight: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
  rateLimit: fc.option(fc.integer({ min: 2, max: 6 }), { nil: null }),
  failureThreshold: fc.integer({ min: 1, max: 4 }),
  phases: fc.array(fc.record({ behaviour: fc.constantFrom<Behaviour>('2xx', '5xx', 'slow', 'close'), messages: fc.integer({ min: 1, max: 3 }) }), { minLength: 1, maxLength: 4 }),
});

/** A receiver whose behaviour the test switches; it logs every request's start and end. */
async function switchable() {
  let behaviour: Behaviour = '2xx';
  let open = 0;
  let maxOpen = 0;
  const requests: { payload: string; at: number; ok: boolean; end: number }[] = [];
  const server: Server = createServer((req, res) => {
    open++;
    maxOpen = Math.max(maxOpen, open);
    const at = Date.now();
    const b = behaviour;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const payload = String(JSON.parse(Buffer.concat(chunks).toString('utf8')).payload);
      const r = { payload, at, ok: b === '2xx', end: Number.POSITIVE_INFINITY };
      requests.push(r);
      // A request is open until it is answered or the service gives up on it (its timeout closes
      // the connection): max_in_flight counts the requests the service has open.
      let closed = false;
      const done = () => {
        if (closed) return;
        closed = true;
        open--;
        r.end = Date.now();
      };
      res.on('close', done);
      if (b === 'close') {
        setTimeout(() => (done(), res.destroy()), 50);
        return;
      }
      // Slow: answers after the webhook's 1 s timeout (the delivery counts a timeout).
      setTimeout(() => {
        done();
        if (!res.destroyed) res.writeHead(b === '5xx' ? 503 : 200).end(b === '5xx' ? 'down' : 'ok');
      }, b === 'slow' ? 1600 : 50);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    maxOpen: () => maxOpen,
    set: (b: Behaviour) => (behaviour = b),
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

it('holds the limits and disables exactly when the thresholds say; re-enable plus replay loses nothing (fast-check)', async () => {
  await fc.assert(
    fc.asyncProperty(scenario, async (sc) => {
      const recv = await switchable();
      try {
        const topic = unique('t');
        const w = await createWebhook(bed.call, {
          url: recv.url, topic_filter: topic, retry_count: 0, timeout: 1, failure_threshold: sc.failureThreshold,
          ...(sc.maxInFlight ? { max_in_flight: sc.maxInFlight } : {}), ...(sc.rateLimit ? { rate_limit: sc.rateLimit } : {}),
        });
        const since = new Date(Date.now() - 1000).toISOString();
        const get = async () => (await bed.call('GET', `/webhooks/${w.name}`)).body.data;
        const status = async () => (await bed.call('GET', `/webhooks/${w.name}/status`)).body.data;
        const published: string[] = [];
        // The model: final failures since the last success, and whether health disabled the webhook.
        let run = 0;
        let disabled = false;
        for (const [i, phase] of sc.phases.entries()) {
          recv.set(phase.behaviour);
          const before = recv.requests.length;
          const payloads = Array.from({ length: phase.messages }, (_, j) => `${topic}-p${i}-m${j}`);
          expect((await bed.call('POST', `/topics/${topic}/messages/batch`, { messages: payloads.map((payload) => ({ payload })) })).status).toBe(201);
          published.push(...payloads);
          await until(async () => { const s = await status(); return s.success_count + s.failure_count >= published.length; }, 60_000, `phase ${i} ended`);
          if (disabled) {
            // Disabled: nothing reaches the receiver, and the deliveries ended failed.
            expect(recv.requests.length).toBe(before);
          } else if (phase.behaviour === '2xx') {
            run = 0;
          } else {
            run += phase.messages;
            disabled = run >= sc.failureThreshold;
          }
          const v = await get();
          expect({ phase: i, status: v.status, reason: v.disabled_reason }).toEqual({
            phase: i,
            status: disabled ? 'disabled' : run > 0 ? 'failing' : 'active',
            reason: disabled ? 'health' : null,
          });
        }
        const s = await status();
        expect(s.success_count + s.failure_count).toBe(published.length);
        expect(s.success_count).toBe(recv.requests.filter((r) => r.ok).length);

        // Re-enable and replay what failed: every message ends with exactly one 2xx.
        recv.set('2xx');
        expect((await bed.call('PATCH', `/webhooks/${w.name}`, { enabled: true })).body.data).toMatchObject({ status: 'active', disabled_reason: null });
        const delivered = () => published.every((p) => recv.requests.some((r) => r.payload === p && r.ok));
        await until(async () => {
          let next: string | null = since;
          while (next) {
            const r: { status: number; body: { data: { next_since: string | null } } } = await bed.call('POST', `/webhooks/${w.name}/replay`, { since: next, status: 'failed' });
            expect(r.status).toBe(200);
            next = r.body.data.next_since;
          }
          await until(async () => delivered(), 5_000, 'replayed').catch(() => undefined);
          return delivered();
        }, 60_000, 'every message delivered after replay');
        for (const p of published) expect({ p, oks: recv.requests.filter((r) => r.payload === p && r.ok).length }).toEqual({ p, oks: 1 });

        // The circuit: after a run of CIRCUIT_TRIP_ATTEMPTS ended failures, one request at a time.
        const byStart = [...recv.requests].sort((a, b) => a.at - b.at);
        const probes = byStart.filter((r) => {
          const ended = recv.requests.filter((x) => x.end <= r.at).sort((a, b) => a.end - b.end);
          let failed = 0;
          for (const x of ended) failed = x.ok ? 0 : failed + 1;
          return failed >= CIRCUIT_TRIP_ATTEMPTS;
        });
        for (let k = 1; k < probes.length; k++) {
          const overlapping = probes.slice(0, k).filter((p) => p.end > probes[k].at + 20);
          expect({ probe: probes[k].payload, overlapping: overlapping.map((p) => p.payload) }).toEqual({ probe: probes[k].payload, overlapping: [] });
        }

        // Limits, over the whole run (replays included).
        if (sc.maxInFlight) expect(recv.maxOpen()).toBeLessThanOrEqual(sc.maxInFlight);
        // Found by this model (issue 22): requests of a rate-limited webhook started closer than
        // 1/rate apart, 5 in one second at rate_limit 2 (FC_SEED=7 FC_RUNS=8): a second's worth of
        // slots behind the clock went out at once, and jobs back from waiting on the queue after
        // their slot went in it late. Fixed in storage/webhook-limits.ts and webhooks/endpoint-limits.ts.
        if (sc.rateLimit) {
          const at = recv.requests.map((r) => r.at).sort((a, b) => a - b);
          let worst = 0;
          for (let a = 0, b = 0; b < at.length; b++) {
            while (at[b] - at[a] >= 1000) a++;
            worst = Math.max(worst, b - a + 1);
          }
          expect({ rate: sc.rateLimit, worstSecond: worst }).toEqual({ rate: sc.rateLimit, worstSecond: Math.min(worst, sc.rateLimit + 1) });
        }
      } finally {
        await recv.close();
      }
    }),
    { numRuns: RUNS, seed: SEED, endOnFailure: true },
  );
});
