/**
 * The webhook share's give-back of a failed admission (lambda/webhooks/share.ts).
 *
 * Promise (docs/design record 19, share.ts): a namespace holds at most its share of delivery
 * batches; no namespace takes more than its share for long.
 *
 * Scenario: during a short DynamoDB outage, N batches of one namespace's slow-lane jobs find
 * their admission (the conditional ADD of admitDeliveries) refused before it was applied (a 503
 * on every attempt: nothing written). Fairness being a guard, each delivers anyway, and
 * each also gives its admission back at its end, once storage is back. Nothing
 * was added, so each give-back drives the lane's counts below zero for the rest of the minute.
 *
 * Observed: after 2 such batches the namespace gets 3 slow-lane batches admitted at once, with a
 * share of 1 (each phantom give-back is one more batch beyond the share, until the minute ends).
 * Expected: one (the outage's batches ran uncounted, but once storage is back the share holds).
 */
import { admit } from '../../lambda/webhooks/share';
import { laneShares } from '../../lambda/webhooks/rules/delivery-lanes';
import { DELIVERY_BATCH_SIZE } from '../../lambda/webhooks/storage/delivery-queue';
import { unique } from '../fixtures/queues';
import { shareUnderFaults } from './share-faults';

jest.setTimeout(30_000);

const injector = shareUnderFaults(45);

/** An admission: an ADD conditional on the room left (lambda/webhooks/storage/webhook-share.ts `admitDeliveries`). */
const isAdmission = (input: Record<string, unknown>) => String(input.UpdateExpression ?? '').startsWith('ADD') && String(input.ConditionExpression ?? '').includes(':room');

it('an admission refused before it was applied is not given back, so the namespace stays within its batch share after the outage', async () => {
  const ns = unique('shphantom');
  const job = { namespace: ns, lane: 'slow' as const };
  const now = Date.now();
  const share = laneShares(2 * DELIVERY_BATCH_SIZE, DELIVERY_BATCH_SIZE).slow.batches;
  expect(share).toBe(1);
  // Two batches during the outage: each admission fails on every attempt, before DynamoDB applied it.
  for (let i = 0; i < 2; i++) {
    injector.failNext({ service: 'dynamodb', command: 'UpdateItemCommand', kind: { code: 'ServiceUnavailable', status: 503 }, timing: 'before', attempts: Number.POSITIVE_INFINITY, matches: isAdmission });
    const during = await admit([job], now);
    expect(injector.unused).toBe(0);
    expect(during.take(ns, 'slow')).toBe(true); // delivered uncounted: a guard, not a gate
    await during.release(); // storage is back by the batch's end
  }
  // After the outage: batches of the namespace admitted at once (none released yet).
  let admitted = 0;
  for (let i = 0; i < 4; i++) if ((await admit([job], now)).take(ns, 'slow')) admitted++;
  expect(admitted).toBe(share);
});

/** A give-back of the share: an ADD of negative counts (lambda/webhooks/storage/webhook-share.ts `releaseDeliveries`). */
const isGiveBack = (input: Record<string, unknown>) => String(input.UpdateExpression ?? '').startsWith('ADD') && !String(input.ConditionExpression ?? '').includes(':room') && Object.values((input.ExpressionAttributeValues ?? {}) as Record<string, unknown>).some((v) => JSON.stringify(v).includes('-'));

/*
 * Same promise. Scenario: one batch's give-back is applied but its answer lost once (a timeout
 * after the write; the SDK, or the give-back's own ~3 s of tries, sends the unconditional ADD
 * again). Observed: the lane's counts go below zero and 2 slow-lane batches are admitted at once
 * with a share of 1, until the minute ends. Expected: one.
 */
it('a give-back whose answer was lost once is not given back twice, so the namespace stays within its batch share', async () => {
  const ns = unique('shtwice');
  const job = { namespace: ns, lane: 'slow' as const };
  const now = Date.now();
  const share = laneShares(2 * DELIVERY_BATCH_SIZE, DELIVERY_BATCH_SIZE).slow.batches;
  const first = await admit([job], now);
  expect(first.take(ns, 'slow')).toBe(true);
  injector.failNext({ service: 'dynamodb', command: 'UpdateItemCommand', kind: { code: 'TimeoutError', status: 0 }, timing: 'after', attempts: 1, matches: isGiveBack });
  await first.release();
  expect(injector.unused).toBe(0);
  let admitted = 0;
  for (let i = 0; i < 4; i++) if ((await admit([job], now)).take(ns, 'slow')) admitted++;
  expect(admitted).toBe(share);
});

/** A hold: the ADD of positive counts, whatever the room, of fast jobs admitted by a read (`holdDeliveries`). */
const isHold = (input: Record<string, unknown>) => String(input.UpdateExpression ?? '').startsWith('ADD') && !String(input.ConditionExpression ?? '').includes(':room') && !JSON.stringify(input.ExpressionAttributeValues ?? {}).includes('-');

/*
 * Promise: no stall of a namespace's deliveries after a DynamoDB outage (docs/design/0019; a
 * batch gives back an admission whose answer was lost). Scenario: a batch of a fast webhook this
 * container has measured is admitted by a read and, still running after the hold time, counts
 * itself (hold()); that ADD is applied but every answer of it is lost (a timeout after the write,
 * on each SDK attempt, each attempt applied). hold() only logs, so the batch's release gives
 * nothing back, and the SDK's re-sent ADDs counted it more than once. Observed: no batch of the
 * namespace's fast lane is admitted for the rest of the minute (0 of its share of 2). Expected:
 * its share (2) once the batch has ended.
 */
it('a hold applied with its answers lost is given back at the batch end, so the fast lane is not left full for the minute', async () => {
  const ns = unique('shhold');
  const job = { namespace: ns, lane: 'fast' as const, measured: true };
  const now = Date.now();
  const share = laneShares(2 * DELIVERY_BATCH_SIZE, DELIVERY_BATCH_SIZE).fast.batches;
  expect(share).toBe(2);
  const batch = await admit([job], now, 60_000);
  expect(batch.take(ns, 'fast')).toBe(true);
  injector.failNext({ service: 'dynamodb', command: 'UpdateItemCommand', kind: { code: 'TimeoutError', status: 0 }, timing: 'after', attempts: Number.POSITIVE_INFINITY, matches: isHold });
  await batch.hold(); // the batch ran past the hold time
  expect(injector.unused).toBe(0);
  await batch.release(); // the batch is done
  let admitted = 0;
  for (let i = 0; i < 4; i++) {
    const next = await admit([job], now, 60_000);
    if (next.take(ns, 'fast')) {
      admitted++;
      await next.hold(); // each counts itself, none released: the lane's share in batches
    }
  }
  expect(admitted).toBe(share);
});

/*
 * Promise: no stall of a namespace's deliveries after a DynamoDB outage. Scenario: an outage a
 * little longer than the give-back's ~3 s of tries (every call of it refused before it applies,
 * six calls): the slow batch's count is never given back. Observed: the namespace's slow lane
 * admits nothing for the rest of the minute once storage is back (0 of its 1 batch). Expected: 1.
 */
it('a give-back refused for longer than its ~3 s of tries is still given back once storage is back, so the slow lane is not left full for the minute', async () => {
  const ns = unique('shlong');
  const job = { namespace: ns, lane: 'slow' as const };
  const now = Date.now();
  const first = await admit([job], now);
  expect(first.take(ns, 'slow')).toBe(true);
  for (let i = 0; i < 6; i++) injector.failNext({ service: 'dynamodb', command: 'UpdateItemCommand', kind: { code: 'ServiceUnavailable', status: 503 }, timing: 'before', attempts: Number.POSITIVE_INFINITY, matches: isGiveBack });
  await first.release();
  expect(injector.unused).toBe(0);
  expect((await admit([job], now)).take(ns, 'slow')).toBe(true);
});
