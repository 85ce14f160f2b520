/**
 * The namespace share of webhook delivery (lambda/webhooks/share.ts) under a storage outage: a
 * batch's give-back that fails leaves its count in the share until it is reclaimed as stale (then:
 * until the count's minute ended). In the fault suite's 3 s DynamoDB outage, three batches of a webhook in the slow lane failed to give
 * theirs back: the lane was full for the rest of the minute, every job of the namespace was
 * deferred again and again, and 159 deliveries of messages answered 201 were not made within the
 * 25 s drain (with the outage early in a minute; a run whose outage fell late in one passed).
 */
import { admit } from '../../lambda/webhooks/share';
import { unique } from '../fixtures/queues';
import { shareUnderFaults } from './share-faults';

jest.setTimeout(30_000);

const injector = shareUnderFaults(32);

/** A give-back of the share: an ADD of negative counts (lambda/webhooks/storage/webhook-share.ts `releaseDeliveries`). */
const isGiveBack = (input: Record<string, unknown>) => String(input.UpdateExpression ?? '').startsWith('ADD') && Object.values((input.ExpressionAttributeValues ?? {}) as Record<string, unknown>).some((v) => JSON.stringify(v).includes('-'));

it('gives a batch back to the share when the first give-back fails (every attempt of the call), so the next batch is admitted', async () => {
  const ns = unique('shrel');
  const job = { namespace: ns, lane: 'slow' as const };
  const now = Date.now();
  const first = await admit([job], now);
  expect(first.take(ns, 'slow')).toBe(true);
  injector.failNext({ service: 'dynamodb', command: 'UpdateItemCommand', kind: { code: 'ServiceUnavailable', status: 503 }, timing: 'before', attempts: Number.POSITIVE_INFINITY, matches: isGiveBack });
  await first.release();
  expect(injector.unused).toBe(0);
  // Before: the failed give-back was only logged, and the lane stayed full until the minute ended.
  expect((await admit([job], now)).take(ns, 'slow')).toBe(true);
});

/** An admission: an ADD conditional on the room left (lambda/webhooks/storage/webhook-share.ts `admitDeliveries`). */
const isAdmission = (input: Record<string, unknown>) => String(input.UpdateExpression ?? '').startsWith('ADD') && String(input.ConditionExpression ?? '').includes(':room');

it('gives back an admission that was applied though every answer of it was lost, so the next batch is admitted', async () => {
  const ns = unique('shadm');
  const job = { namespace: ns, lane: 'slow' as const };
  const now = Date.now();
  injector.failNext({ service: 'dynamodb', command: 'UpdateItemCommand', kind: { code: 'TimeoutError', status: 0 }, timing: 'after', attempts: Number.POSITIVE_INFINITY, matches: isAdmission });
  const first = await admit([job], now);
  expect(injector.unused).toBe(0);
  // The count unavailable, the batch delivers anyway (fairness is a guard, not a gate).
  expect(first.take(ns, 'slow')).toBe(true);
  await first.release();
  // Before: the applied count was never given back, and the lane stayed full until the minute ended.
  expect((await admit([job], now)).take(ns, 'slow')).toBe(true);
});
