/**
 * A subscriber's cursor move (lambda/subscriptions/storage/subscriptions.ts `moveCursor`) bounded
 * by the consume's answer deadline (`answerBy`: API Gateway's 29 s integration timeout less the
 * answer's reserve, or the Lambda's end): no try of the move may begin after it, or the consume
 * answers after API Gateway gave up (504) or the Lambda ended. Every attempt here is answered
 * `TransactionInProgressException`, which the SDK retries as a throttle with its own backoff, up
 * to 2^n x 500 ms at full jitter (https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html);
 * Math.random at its largest draw (0.99) makes those waits their longest, as the move's other test
 * makes them their shortest.
 */
import type { FinalizeRequestMiddleware, Pluggable } from '@smithy/types';
import { registerClientPlugin } from '../../lambda/core/client-plugins';
import { moveCursor } from '../../lambda/subscriptions/storage/subscriptions';
import { createTestNamespace } from '../fixtures/namespace';

jest.setTimeout(60_000);

/** Send times of the cursor moves' attempts (inside the SDK's retry loop: one per attempt). */
const attempts: number[] = [];
let failing = false;
const inProgress: FinalizeRequestMiddleware<any, any> = (next) => async (args) => {
  const body = String((args.request as { body?: unknown }).body ?? '');
  if (!failing || !body.includes('CURSOR#') || !body.includes('ClientRequestToken')) return next(args);
  attempts.push(Date.now());
  throw Object.assign(new Error('The transaction with the given request token is already in progress.'), { name: 'TransactionInProgressException', $fault: 'client', $metadata: { httpStatusCode: 400 } });
};
const plugin: Pluggable<any, any> = { applyToStack: (stack) => stack.add(inProgress, { step: 'finalizeRequest', priority: 'low', name: 'testInProgress' }) };
registerClientPlugin('dynamodb', plugin);

afterEach(() => jest.restoreAllMocks());

// Open defect, kept visible: `withRetries`' `until` bounds only its own waits, not a try's SDK
// retries inside transactWrite, so a move answered TransactionInProgressException with the SDK's
// longest backoff draws starts tries 0.7 to 6.7 s after the deadline. Marked failing until a try
// itself is bounded (an abort signal at the deadline); jest reports it when it starts to pass.
it.failing('begins no try of a move after the answer deadline, whatever the SDK waits between its attempts', async () => {
  const ns = (await createTestNamespace('movedl')).name;
  const now = Date.now();
  const answerBy = now + 300;
  failing = true;
  jest.spyOn(Math, 'random').mockReturnValue(0.99);
  const outcome = await moveCursor(ns, `sub-${now}`, 'a', undefined, 1, now, 60_000, answerBy).then(
    () => 'moved',
    (e: Error) => e.name,
  );
  failing = false;
  jest.restoreAllMocks();
  expect({ outcome, afterDeadline: attempts.filter((t) => t > answerBy).map((t) => t - answerBy) }).toEqual({ outcome: 'TransactionInProgressException', afterDeadline: [] });
});
