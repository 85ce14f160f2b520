/**
 * The namespace share's slow lane (lambda/webhooks/share.ts) when DynamoDB throttles one of a
 * batch's two admissions.
 *
 * Promise (record 0019, docs/webhooks.md "Guarantees and limits"): a slow webhook holds at most
 * its lane's share; with the count unavailable a batch delivers uncounted (fairness is a guard),
 * but jobs the share has refused stay refused.
 * Scenario: the slow lane is full (one batch, a share of 20). A batch with a slow and a fast job
 * (a webhook not measured yet) of the namespace: its slow admission is answered, refused (the lane
 * is full); its fast admission, on the same item, is throttled on every attempt of the SDK.
 * Observed: the admission's catch delivers every job it did not count (`got.slow = w.slow` when
 * `t.slow` is unset), so the slow job the share had just refused is delivered too, uncounted:
 * two slow batches in flight against a lane of one. Expected: only the fast job, whose count was
 * unavailable, goes uncounted; the refused slow job is deferred.
 *
 * The second test: the same through the reclaim of stale entries (new with one item per
 * namespace). A refused admission whose refusal shows a crashed batch's stale entries that fill
 * its lane reclaims them before trying again; when that reclaim is throttled, the error left the
 * admission, and the batch delivered its slow jobs uncounted though the refusal said the lane was
 * full. Expected: the refusal stands (the next admitter reclaims). (The reviewer's scenario had
 * the stale entry in the fast lane and a live batch filling the slow lane; a reclaim is now tried
 * only when it would change the answer, so there no reclaim is sent at all.)
 */
import { admit, STALE_AFTER_SECONDS } from '../../lambda/webhooks/share';
import { unique } from '../fixtures/queues';
import { shareUnderFaults } from './share-faults';

jest.setTimeout(30_000);

const injector = shareUnderFaults(46);

/** The fast lane's admission: an ADD of `in_flight` conditional on the room left (lambda/webhooks/storage/webhook-share.ts `addCommand`). */
const isFastAdmission = (input: Record<string, unknown>) =>
  String(input.ConditionExpression ?? '').includes(':room') && (input.ExpressionAttributeNames as Record<string, string> | undefined)?.['#n'] === 'in_flight';

it('defers a slow job the full slow lane refused, though the same batch could not count its fast job (throttled)', async () => {
  const ns = unique('shthr');
  const slow = { namespace: ns, lane: 'slow' as const };
  const now = Date.now();
  const holding = await admit([slow], now);
  expect(holding.take(ns, 'slow')).toBe(true);
  injector.failNext({ service: 'dynamodb', command: 'UpdateItemCommand', kind: { code: 'ProvisionedThroughputExceededException', status: 400 }, timing: 'before', attempts: Number.POSITIVE_INFINITY, matches: isFastAdmission });
  const next = await admit([slow, ns], now);
  expect(injector.unused).toBe(0);
  // The fast job's count is unavailable: it is delivered uncounted (documented).
  expect(next.take(ns, 'fast')).toBe(true);
  // The slow lane answered and refused this batch: its slow job waits on the queue.
  expect(next.take(ns, 'slow')).toBe(false);
  await Promise.all([holding.release(), next.release()]);
});

/** A reclaim of stale entries: a REMOVE conditional on their values (lambda/webhooks/storage/webhook-share.ts `reclaim`). */
const isReclaim = (input: Record<string, unknown>) => String(input.UpdateExpression ?? '').startsWith('REMOVE');

it('defers a slow job the full slow lane refused, though reclaiming a stale entry seen on the refusal was throttled', async () => {
  const ns = unique('shrcl');
  const slow = { namespace: ns, lane: 'slow' as const };
  const t0 = Date.now();
  // A crashed invocation's slow batch, never given back: it fills the slow lane (one batch).
  expect((await admit([slow], t0)).take(ns, 'slow')).toBe(true);
  // Past the stale age, the next slow batch is refused; its refusal shows the stale entry, whose
  // reclaim would admit it (so it is tried) and is throttled.
  const later = t0 + (STALE_AFTER_SECONDS + 1) * 1000;
  injector.failNext({ service: 'dynamodb', command: 'UpdateItemCommand', kind: { code: 'ProvisionedThroughputExceededException', status: 400 }, timing: 'before', attempts: Number.POSITIVE_INFINITY, matches: isReclaim });
  const next = await admit([slow], later);
  expect(injector.unused).toBe(0);
  expect(next.take(ns, 'slow')).toBe(false);
  await next.release();
});
