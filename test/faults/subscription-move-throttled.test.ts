/**
 * A subscriber's cursor move (lambda/subscriptions/storage/subscriptions.ts `moveCursor`, a one-item
 * TransactWriteItems since 2026-11-30) throttled as AWS throttles a transaction: not only with a
 * top-level ThrottlingException (what ./fault-kinds.ts injects), but by cancelling it with
 * `TransactionCanceledException` whose reason is `ThrottlingError` (an on-demand table or index
 * scaling, or a hot key: the cursor shares the head's partition key) or
 * `ProvisionedThroughputExceeded` (a provisioned table): "There is insufficient provisioned capacity
 * for the transaction to be completed", reasons "Throughput exceeds the current capacity of your
 * table or index ... please try again shortly"
 * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html, Errors).
 * The SDK does not retry a TransactionCanceledException. A throttle is a passing failure
 * (DESIGN.md section 3): a consume it meets must not answer 500, and a move applied before it (its
 * answer lost) must still give its batch to the consume.
 */
import { isCursorMove, newSubscription } from './subscription-fixture';
import { placedFaults } from './placed';
import type { FaultKind } from './fault-kinds';

jest.setTimeout(30_000);

const t = placedFaults({ namespace: 'fault-move-throttle', seed: 7, services: ['dynamodb'] });

/** A subscriber's cursor move: the only write of a cursor key. */
const MOVE = 'TransactWriteItemsCommand';
const timeout: FaultKind = { code: 'TimeoutError', status: 0 };
/** AWS's answer to a transaction it throttled, as the API reference lists the cancellation reasons. */
const cancelledThrottled = (code: 'ThrottlingError' | 'ProvisionedThroughputExceeded'): FaultKind => ({
  code: 'TransactionCanceledException',
  status: 400,
  fields: {
    Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${code}]`,
    CancellationReasons: [{ Code: code, Message: 'Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your table or index so please try again shortly.' }],
  },
});


afterEach(() => t.injector.clearOneShots());

it.each(['ThrottlingError', 'ProvisionedThroughputExceeded'] as const)('retries a move throttled once as a cancelled transaction (%s), as any throttle, and answers the batch', async (code) => {
  const { consume, publish } = await newSubscription(t);
  expect(await consume(1)).toEqual([200, []]); // the subscriber's cursor exists
  await publish('one', 'two');
  t.injector.failNext({ service: 'dynamodb', command: MOVE, kind: cancelledThrottled(code), timing: 'before', attempts: 1, matches: isCursorMove });
  // Before: the cancel was neither a failed condition nor retryable (not for the SDK, not for the
  // move's own tries), so the consume answered 500 INTERNAL_ERROR to one throttled request.
  const first = await consume(1);
  expect(t.injector.unused).toBe(0);
  expect({ first, rest: await consume(10) }).toEqual({ first: [200, ['one']], rest: [200, ['two']] });
});

it('gives the consume its batch when its move was applied, every answer of the SDK lost, and its next try throttled as a cancelled transaction', async () => {
  const { consume, publish } = await newSubscription(t);
  expect(await consume(1)).toEqual([200, []]);
  await publish('one', 'two');
  // The move's first call: applied, then repeated by the SDK (its token: no second move), every answer lost.
  t.injector.failNext({ service: 'dynamodb', command: MOVE, kind: timeout, timing: 'after', attempts: Number.POSITIVE_INFINITY, matches: isCursorMove });
  // Its next try (the move's own, with the same token), throttled.
  t.injector.failNext({ service: 'dynamodb', command: MOVE, kind: cancelledThrottled('ThrottlingError'), timing: 'before', attempts: 1, matches: isCursorMove });
  // Before: the throttle ended the move's tries at once: the consume answered 500, and 'one', taken
  // by the applied move, was never given to this subscriber (the next consume answered 'two').
  const first = await consume(1);
  expect(t.injector.unused).toBe(0);
  expect({ first, rest: await consume(10) }).toEqual({ first: [200, ['one']], rest: [200, ['two']] });
});
