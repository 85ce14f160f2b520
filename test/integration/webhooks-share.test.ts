/**
 * The per-namespace share counts batches (Lambda invocations) as well as jobs
 * (docs/design/0019-fair-delivery-between-namespaces.md): an invocation stays busy until its
 * slowest job ends, so a namespace whose jobs are spread one per batch could hold every invocation
 * while within its share of jobs. Against DynamoDB Local.
 *
 * Jobs given as a bare namespace are of a webhook the container has not measured: counted from
 * the start, as slow jobs are. Fast jobs of a measured webhook are admitted by a read and counted
 * only by a batch still running a moment later (`HOLD_AFTER_MS`).
 */
import { resetConfig } from '../../lambda/core/config';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, dynamoClient, tableName } from '../../lambda/core/storage/client';
import { metaKeys } from '../../lambda/core/storage/keys';
import { admit, STALE_AFTER_SECONDS } from '../../lambda/webhooks/share';
import { DELIVERY_BATCH_SIZE } from '../../lambda/webhooks/storage/delivery-queue';
import { unique } from '../fixtures/queues';
import { until } from '../fixtures/receiver';

afterAll(() => {
  delete process.env.MSG_WEBHOOK_NAMESPACE_SHARE;
  resetConfig();
});

describe('namespace share', () => {
  it('lets one namespace hold at most ceil(share / batch size) batches at once, however few jobs each has', async () => {
    process.env.MSG_WEBHOOK_NAMESPACE_SHARE = String(2 * DELIVERY_BATCH_SIZE);
    resetConfig();
    const ns = unique('share');
    const other = unique('other');
    const now = Date.now();
    // A share of 2 batches' jobs = 2 batches: the third batch with one job of the namespace gets none.
    const held = [await admit([ns], now), await admit([ns], now)];
    expect(held.map((s) => s.take(ns))).toEqual([true, true]);
    const third = await admit([ns, other], now);
    expect(third.take(ns)).toBe(false);
    expect(third.take(other)).toBe(true);
    // A batch that ends gives its place back.
    await held[0].release();
    expect((await admit([ns], now)).take(ns)).toBe(true);
  });

  it("counts a batch of a measured fast webhook's jobs only once it has run for the hold time, and writes nothing for one that ends before", async () => {
    process.env.MSG_WEBHOOK_NAMESPACE_SHARE = String(DELIVERY_BATCH_SIZE);
    resetConfig();
    const ns = unique('hold');
    const job = { namespace: ns, lane: 'fast' as const, measured: true };
    const now = Date.now();
    const shareItem = async () => (await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.webhookInFlight(ns), ConsistentRead: true }))).Item;
    // A share of one batch. Batches that end at once leave no trace, however many.
    for (let i = 0; i < 3; i++) {
      const quick = await admit([job, job], now);
      expect([quick.take(ns), quick.take(ns)]).toEqual([true, true]);
      await quick.release();
    }
    expect(await shareItem()).toBeUndefined();
    // A batch still running after its hold time (50 ms here) counts itself: the next is refused.
    const long = await admit([job], now, 50);
    expect(long.take(ns)).toBe(true);
    // Its count is written once its hold timer fires, a write later: within 400 ms (the default
    // hold is 1 s) at the suite's time scale, where a timer and a write take longer.
    await until(async () => (await shareItem())?.in_flight === 1, 400, 'the long batch counted');
    expect(await shareItem()).toMatchObject({ in_flight: 1, batches: 1 });
    expect((await admit([job], now)).take(ns)).toBe(false);
    // Its end gives the place back.
    await long.release();
    expect(await shareItem()).toMatchObject({ in_flight: 0, batches: 0 });
    // Jobs of a webhook not measured yet count from the start: the next batch is refused at once.
    const fresh = await admit([{ ...job, measured: false }], now);
    expect(fresh.take(ns)).toBe(true);
    expect(await shareItem()).toMatchObject({ in_flight: 1, batches: 1 });
    expect((await admit([job], now)).take(ns)).toBe(false);
    await fresh.release();
    const after = await admit([job], now);
    expect(after.take(ns)).toBe(true);
    await after.release();
  });
});

describe('namespace share in lanes', () => {
  it("counts a batch holding slow jobs against the slow lane only, so the fast lane's batches stay free", async () => {
    process.env.MSG_WEBHOOK_NAMESPACE_SHARE = String(2 * DELIVERY_BATCH_SIZE);
    resetConfig();
    const ns = unique('lanes');
    const now = Date.now();
    // A share of 2 batches' jobs: the fast lane has 2 batches, the slow lane half the jobs in 1 batch.
    const slowBatch = await admit([{ namespace: ns, lane: 'slow' }, { namespace: ns, lane: 'fast' }], now);
    expect([slowBatch.take(ns, 'slow'), slowBatch.take(ns, 'fast')]).toEqual([true, true]);
    // The slow lane is full: a second batch's slow job is deferred, and its fast job takes a fast batch.
    const second = await admit([{ namespace: ns, lane: 'slow' }, { namespace: ns, lane: 'fast' }], now);
    expect([second.take(ns, 'slow'), second.take(ns, 'fast')]).toEqual([false, true]);
    // The fast lane still has its second batch, though a slow batch is held.
    const third = await admit([ns], now);
    expect(third.take(ns)).toBe(true);
    expect((await admit([ns], now)).take(ns)).toBe(false);
    // Giving the slow batch back frees the slow lane (and not a fast batch).
    await slowBatch.release();
    expect((await admit([{ namespace: ns, lane: 'slow' }], now)).take(ns, 'slow')).toBe(true);
    expect((await admit([ns], now)).take(ns)).toBe(false);
    await second.release();
    expect((await admit([ns], now)).take(ns)).toBe(true);
  });

  it('admits slow jobs within the slow lane share in jobs', async () => {
    process.env.MSG_WEBHOOK_NAMESPACE_SHARE = '20';
    resetConfig();
    const ns = unique('lanejobs');
    const s = await admit(Array.from({ length: 10 }, () => ({ namespace: ns, lane: 'slow' as const })));
    expect(Array.from({ length: 10 }, () => s.take(ns, 'slow')).filter(Boolean)).toHaveLength(10);
    expect(s.take(ns, 'slow')).toBe(false);
  });
});

describe('namespace share over time: one count per namespace, no minute windows', () => {
  const shareItem = async (ns: string) => (await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.webhookInFlight(ns), ConsistentRead: true }))).Item ?? {};
  const slow = (ns: string) => ({ namespace: ns, lane: 'slow' as const });

  it('keeps counting a batch admitted just before a minute boundary after it, so the lane holds no more than its share', async () => {
    process.env.MSG_WEBHOOK_NAMESPACE_SHARE = String(2 * DELIVERY_BATCH_SIZE);
    resetConfig();
    const ns = unique('boundary');
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    // A share of 2 batches' jobs: the slow lane holds one batch. One is admitted at 59.5 s and still running.
    const running = await admit([slow(ns)], minute + 59_500);
    expect(running.take(ns, 'slow')).toBe(true);
    // Before: the count was kept per minute, and a batch at 60.5 s found a fresh count at 0.
    expect((await admit([slow(ns)], minute + 60_500)).take(ns, 'slow')).toBe(false);
    await running.release();
    expect((await admit([slow(ns)], minute + 61_000)).take(ns, 'slow')).toBe(true);
  });

  it("stops counting a crashed batch's entries once they are older than the stale age, and reclaimers at once subtract them once", async () => {
    process.env.MSG_WEBHOOK_NAMESPACE_SHARE = String(2 * DELIVERY_BATCH_SIZE);
    resetConfig();
    const ns = unique('crash');
    const t0 = Date.now();
    // Batches of a crashed invocation, never given back: a slow batch (3 slow jobs, 2 fast riding)
    // and two fast batches of an unmeasured webhook, which fill the fast lane's 2 batches.
    const crashed = [await admit([slow(ns), slow(ns), slow(ns), ns, ns], t0), await admit([ns], t0), await admit([ns], t0)];
    expect(crashed.map((c) => [c.take(ns, 'slow'), c.take(ns, 'fast')])).toEqual([[true, true], [false, true], [false, true]]);
    expect(await shareItem(ns)).toMatchObject({ slow_in_flight: 3, slow_batches: 1, in_flight: 4, batches: 2 });
    // Within the stale age the crashed counts still hold.
    expect((await admit([slow(ns)], t0 + (STALE_AFTER_SECONDS - 1) * 1000)).take(ns, 'slow')).toBe(false);
    // Past it, four batches at once each find them: two slow ones (refused admissions) and two
    // of a measured fast webhook (reads). The lanes count only the live batches after.
    const later = t0 + (STALE_AFTER_SECONDS + 1) * 1000;
    const measured = { namespace: ns, lane: 'fast' as const, measured: true };
    const after = await Promise.all([admit([slow(ns), slow(ns)], later), admit([slow(ns), slow(ns)], later), admit([measured], later, 60_000), admit([measured], later, 60_000)]);
    expect(after.slice(0, 2).filter((b) => b.take(ns, 'slow') && b.take(ns, 'slow'))).toHaveLength(1);
    expect(after.slice(2).map((b) => b.take(ns, 'fast'))).toEqual([true, true]);
    const item = await shareItem(ns);
    expect(item).toMatchObject({ slow_in_flight: 2, slow_batches: 1, in_flight: 0, batches: 0 });
    expect(Object.keys(item).filter((k) => /^[fs]_/.test(k))).toHaveLength(1);
    // Each write moves the item's TTL a day past its batch's start.
    expect(item.ttl).toBe(Math.floor(later / 1000) + 24 * 3600);
    await Promise.all(after.map((b) => b.release()));
    expect(await shareItem(ns)).toMatchObject({ slow_in_flight: 0, slow_batches: 0, in_flight: 0, batches: 0 });
  });
});

describe("the share's cost per batch", () => {
  /** Units DynamoDB reports for the calls on share items (keys with WHINFLIGHT), by a middleware on the client. */
  const metered = async (run: () => Promise<void>) => {
    const units = { reads: 0, writes: 0 };
    const stack = dynamoClient().middlewareStack as unknown as { add: (m: unknown, o: unknown) => void; remove: (n: string) => void };
    const onShare = (input: { Key?: unknown }) => JSON.stringify(input.Key ?? '').includes('WHINFLIGHT');
    stack.add(
      (next: (a: { input: Record<string, unknown> }) => Promise<{ output: { ConsumedCapacity?: { CapacityUnits?: number } } }>, context: { commandName?: string }) =>
        async (args: { input: Record<string, unknown> }) => {
          if (!onShare(args.input)) return next(args);
          args.input.ReturnConsumedCapacity = 'TOTAL';
          const read = context.commandName === 'GetItemCommand';
          try {
            const out = await next(args);
            units[read ? 'reads' : 'writes'] += out.output.ConsumedCapacity?.CapacityUnits ?? 0;
            return out;
          } catch (e) {
            // A refused conditional write is billed too (DynamoDB Local does not say how much: 1 unit each here).
            if (!read) units.writes += 1;
            throw e;
          }
        },
      { step: 'initialize', name: 'shareMeter' },
    );
    try {
      await run();
    } finally {
      stack.remove('shareMeter');
    }
    return units;
  };

  it('writes 1 unit to admit and 1 to give back a slow batch, and nothing for a fast batch that ends at once, with 30 batches of its namespace in flight', async () => {
    process.env.MSG_WEBHOOK_NAMESPACE_SHARE = '1000';
    resetConfig();
    const ns = unique('units');
    const now = Date.now();
    const inFlight = await Promise.all(Array.from({ length: 30 }, () => admit([ns], now)));
    expect(inFlight.every((b) => b.take(ns))).toBe(true);
    const slowBatch = await metered(async () => {
      const b = await admit([{ namespace: ns, lane: 'slow' }], now);
      expect(b.take(ns, 'slow')).toBe(true);
      await b.release();
    });
    expect(slowBatch.writes).toBe(2);
    const fastBatch = await metered(async () => {
      const b = await admit([{ namespace: ns, lane: 'fast', measured: true }], now);
      expect(b.take(ns)).toBe(true);
      await b.release();
    });
    expect(fastBatch).toEqual({ reads: 1, writes: 0 });
    await Promise.all(inFlight.map((b) => b.release()));
  });
});
