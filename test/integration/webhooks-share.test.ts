/**
 * The per-namespace share counts batches (Lambda invocations) as well as jobs (issue 22 item 0):
 * an invocation stays busy until its slowest job ends, so a namespace whose jobs are spread one
 * per batch could hold every invocation while within its share of jobs. Against DynamoDB Local.
 */
import { resetConfig } from '../../lambda/config';
import { admit } from '../../lambda/webhooks/share';
import { DELIVERY_BATCH_SIZE } from '../../lambda/adapters/delivery-queue';
import { unique } from '../fixtures/queues';

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
});

describe('namespace share in lanes (issue 22 item 5)', () => {
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
