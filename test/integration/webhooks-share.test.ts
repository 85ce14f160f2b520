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
