/**
 * The namespace share (lambda/webhooks/share.ts, lambda/webhooks/storage/webhook-share.ts) under 300
 * concurrent admissions of one namespace that all find its lanes full of a crashed invocation's
 * stale entries: refused admissions and reads reclaim them at once, each then admits again.
 *
 * Promise (record 0019): the lanes never hold more than their shares (jobs and batches), two
 * reclaimers never subtract twice, and the counts are exactly the live batches' (0 once they end).
 * Held when written; it adds scale (300 admitters, both lanes, riders and reads at once) to the
 * four reclaimers of test/integration/webhooks-share.test.ts.
 */
import { resetConfig } from '../../lambda/core/config';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { metaKeys } from '../../lambda/core/storage/keys';
import { admit, STALE_AFTER_SECONDS, type ShareJob } from '../../lambda/webhooks/share';
import { unique } from '../fixtures/queues';

jest.setTimeout(120_000);

afterAll(() => {
  delete process.env.MSG_WEBHOOK_NAMESPACE_SHARE;
  resetConfig();
});

const shareItem = async (ns: string) => (await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.webhookInFlight(ns), ConsistentRead: true }))).Item ?? {};
const entries = (item: Record<string, unknown>) => Object.keys(item).filter((k) => /^[fs]_/.test(k)).length;

it('keeps both lanes within their shares, and counts exactly the live batches, when 300 admissions at once reclaim a crashed invocation', async () => {
  // A share of 50: the fast lane 50 jobs in 5 batches, the slow lane 25 in 3.
  process.env.MSG_WEBHOOK_NAMESPACE_SHARE = '50';
  resetConfig();
  const ns = unique('conc');
  const slow: ShareJob = { namespace: ns, lane: 'slow' };
  const measured: ShareJob = { namespace: ns, lane: 'fast', measured: true };
  const t0 = Date.now();
  // A crashed invocation's batches fill both lanes: 3 slow batches, 5 fast batches of 10.
  const crashed = await Promise.all([
    ...Array.from({ length: 3 }, () => admit(Array.from({ length: 8 }, () => slow), t0)),
    ...Array.from({ length: 5 }, () => admit(Array.from({ length: 10 }, () => ns as ShareJob), t0)),
  ]);
  expect(await shareItem(ns)).toMatchObject({ slow_in_flight: 24, slow_batches: 3, in_flight: 50, batches: 5 });
  void crashed;
  const later = t0 + (STALE_AFTER_SECONDS + 1) * 1000;
  const kinds = Array.from({ length: 300 }, (_, i) => (['rider', 'fast', 'measured'] as const)[i % 3]);
  const jobsOf = { rider: [slow, slow, slow, ns, ns], fast: [ns, ns, ns, ns], measured: [measured, measured, measured] };
  const batches = await Promise.all(kinds.map((k) => admit(jobsOf[k], later, 60_000)));
  const took = batches.map((b, i) => {
    const n = jobsOf[kinds[i]].length;
    const got = { slow: 0, fast: 0 };
    for (let j = 0; j < n; j++) {
      if (b.take(ns, 'slow')) got.slow++;
      else if (b.take(ns, 'fast')) got.fast++;
    }
    return { kind: kinds[i], ...got };
  });
  const sum = (f: (t: (typeof took)[number]) => number) => took.reduce((a, t) => a + f(t), 0);
  const slowJobs = sum((t) => t.slow);
  const slowBatches = sum((t) => (t.slow ? 1 : 0));
  // Counted fast jobs: riders and a webhook not measured yet (measured ones are counted by a hold, not here).
  const fastJobs = sum((t) => (t.kind === 'measured' ? 0 : t.fast));
  // Fast batches: a webhook not measured yet, and riders whose slow jobs the slow lane refused
  // (their fast jobs then take a fast batch of their own).
  const fastBatches = sum((t) => (t.kind !== 'measured' && t.fast && !t.slow ? 1 : 0));
  expect(slowJobs).toBeLessThanOrEqual(25);
  expect(slowBatches).toBeLessThanOrEqual(3);
  expect(fastJobs).toBeLessThanOrEqual(50);
  expect(fastBatches).toBeLessThanOrEqual(5);
  // The crashed batches' counts are gone, the live ones' counted exactly: each is one entry per lane it took.
  const item = await shareItem(ns);
  expect({ slow_in_flight: item.slow_in_flight, slow_batches: item.slow_batches, in_flight: item.in_flight, batches: item.batches }).toEqual({
    slow_in_flight: slowJobs, slow_batches: slowBatches, in_flight: fastJobs, batches: fastBatches,
  });
  expect(entries(item)).toBe(slowBatches + sum((t) => (t.kind !== 'measured' && t.fast ? 1 : 0)));
  // Something was admitted in each lane once the stale counts went.
  expect(slowBatches * fastBatches).toBeGreaterThan(0);
  await Promise.all(batches.map((b) => b.release()));
  const after = await shareItem(ns);
  expect({ slow_in_flight: after.slow_in_flight, slow_batches: after.slow_batches, in_flight: after.in_flight, batches: after.batches, entries: entries(after) }).toEqual({
    slow_in_flight: 0, slow_batches: 0, in_flight: 0, batches: 0, entries: 0,
  });
});
