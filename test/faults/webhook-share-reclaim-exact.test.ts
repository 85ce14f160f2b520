/**
 * The namespace share's reclaim of a crashed batch's counts (lambda/webhooks/storage/webhook-share.ts
 * `reclaim`) under lost answers and a late give-back: counts subtracted once, never below zero.
 *
 * Promise (record 0019, "One count per namespace"): an entry older than the stale age is removed
 * by one conditional write subtracting its counts; a write re-sent after a lost answer, or a
 * give-back of an entry a reclaim took, subtracts nothing twice.
 * These held when written (they add the lost-answer and owed-give-back cases to the concurrent
 * reclaimers of test/integration/webhooks-share.test.ts).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { metaKeys } from '../../lambda/core/storage/keys';
import { admit, STALE_AFTER_SECONDS } from '../../lambda/webhooks/share';
import { admitDeliveries, releaseDeliveries } from '../../lambda/webhooks/storage/webhook-share';
import { unique } from '../fixtures/queues';
import { shareUnderFaults } from './share-faults';

jest.setTimeout(60_000);

const injector = shareUnderFaults(19);

const shareItem = async (ns: string) => (await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.webhookInFlight(ns), ConsistentRead: true }))).Item ?? {};
const counts = (item: Record<string, unknown>) => ({ slow_in_flight: item.slow_in_flight, slow_batches: item.slow_batches, entries: Object.keys(item).filter((k) => /^[fs]_/.test(k)).length });
/** A reclaim: removes entries, conditional on their values. */
const isReclaim = (input: Record<string, unknown>) => String(input.UpdateExpression ?? '').startsWith('REMOVE');
/** A give-back: an ADD of negative counts removing the batch's entries. */
const isGiveBack = (input: Record<string, unknown>) => String(input.UpdateExpression ?? '').startsWith('ADD') && String(input.UpdateExpression ?? '').includes('REMOVE');

it("subtracts a crashed batch's counts once when the reclaim's answer is lost and the SDK sends it again", async () => {
  const ns = unique('rclost');
  const slow = { namespace: ns, lane: 'slow' as const };
  const t0 = Date.now();
  // A crashed batch: admitted, never given back (3 slow jobs, the lane's one batch).
  expect((await admit([slow, slow, slow], t0)).take(ns, 'slow')).toBe(true);
  injector.failNext({ service: 'dynamodb', command: 'UpdateItemCommand', kind: { code: 'TimeoutError', status: 0 }, timing: 'after', attempts: 1, matches: isReclaim });
  const later = await admit([slow], t0 + (STALE_AFTER_SECONDS + 1) * 1000);
  expect(injector.unused).toBe(0);
  expect(later.take(ns, 'slow')).toBe(true);
  expect(counts(await shareItem(ns))).toEqual({ slow_in_flight: 1, slow_batches: 1, entries: 1 });
  await later.release();
  expect(counts(await shareItem(ns))).toEqual({ slow_in_flight: 0, slow_batches: 0, entries: 0 });
});

it('gives nothing back twice when a batch pays its owed give-back after another container reclaimed its entry', async () => {
  const ns = unique('rcowed');
  const slow = { namespace: ns, lane: 'slow' as const };
  const t0 = Date.now();
  const first = await admit([slow, slow], t0);
  expect(first.take(ns, 'slow')).toBe(true);
  // Every try of its give-back fails (6 tries): it is owed to this container's next batch.
  for (let i = 0; i < 6; i++) injector.failNext({ service: 'dynamodb', command: 'UpdateItemCommand', kind: { code: 'ServiceUnavailable', status: 503 }, timing: 'before', attempts: Number.POSITIVE_INFINITY, matches: isGiveBack });
  await first.release();
  expect(injector.unused).toBe(0);
  // Another container, its clock 2 s ahead, reclaims it as stale and admits a batch of its own
  // (by the storage calls: \`admit\` here would be this container's, which drops what it owes once stale).
  const start = Math.floor(t0 / 1000) + STALE_AFTER_SECONDS + 1;
  const at = { start, staleBefore: start - STALE_AFTER_SECONDS };
  expect(await admitDeliveries(ns, at, 'a0a0a0a0a0a0', 1, 10, 1, 'slow')).toBe(1);
  // This container, its clock behind, still finds its give-back due and pays it before its next batch.
  const next = await admit([ns], t0 + (STALE_AFTER_SECONDS - 1) * 1000);
  expect(next.take(ns)).toBe(true);
  // The reclaimed entry's counts were subtracted once: the other container's batch still counts.
  expect(counts(await shareItem(ns))).toMatchObject({ slow_in_flight: 1, slow_batches: 1 });
  await Promise.all([releaseDeliveries(ns, at, 'a0a0a0a0a0a0', { slow: { jobs: 1, batch: true } }), next.release()]);
  expect(counts(await shareItem(ns))).toEqual({ slow_in_flight: 0, slow_batches: 0, entries: 0 });
});
