/**
 * A subscriber's cursor move (lambda/subscriptions/storage/subscriptions.ts `moveCursor`) whose
 * first try is still in progress at DynamoDB: every repeat of its ClientRequestToken is answered
 * `TransactionInProgressException`, and AWS recovers the first inline only for a retry 5 s or more
 * after its first attempt (the exception's "Recommended Settings",
 * https://docs.aws.amazon.com/AWSJavaSDK/latest/javadoc/com/amazonaws/services/dynamodbv2/model/TransactionInProgressException.html;
 * local/aws-harsh/dynamodb-transactions.ts answers such repeats so too). The SDK's own waits
 * between its retries are random from 0 (full jitter), so the move cannot count on them: here they
 * are 0, the harshest draw. And a move that never gets through answers 503, never 500.
 */
import { isCursorMove, newSubscription } from './subscription-fixture';
import { placedFaults } from './placed';
import type { FaultKind } from './fault-kinds';

jest.setTimeout(60_000);

const t = placedFaults({ namespace: 'fault-move-in-progress', seed: 11, services: ['dynamodb'] });

const MOVE = 'TransactWriteItemsCommand';
const inProgress: FaultKind = { code: 'TransactionInProgressException', status: 400 };
const throttledCancel: FaultKind = {
  code: 'TransactionCanceledException',
  status: 400,
  fields: { Message: 'Transaction cancelled, please refer cancellation reasons for specific reasons [ThrottlingError]', CancellationReasons: [{ Code: 'ThrottlingError' }] },
};


/** Fails every move call (all its attempts) with `kind` while `during` holds. */
function failMoves(kind: FaultKind, during: () => boolean) {
  for (let i = 0; i < 40; i++) t.injector.failNext({ service: 'dynamodb', command: MOVE, kind, timing: 'before', attempts: Number.POSITIVE_INFINITY, matches: (input) => isCursorMove(input) && during() });
}

afterEach(() => {
  jest.restoreAllMocks();
  t.injector.clearOneShots();
});

it('sends a move met by its own transaction in progress again until a try 5 s after the first, and answers the batch', async () => {
  const { consume, publish } = await newSubscription(t);
  expect(await consume(1)).toEqual([200, []]);
  await publish('one', 'two');
  let first: number | undefined;
  failMoves(inProgress, () => Date.now() - (first ??= Date.now()) < 5_000);
  // The SDK's jitter at its smallest: its retries come at once.
  jest.spyOn(Math, 'random').mockReturnValue(0);
  // Before: six tries over 3.1 s, every one answered in progress: 503, the batch not given.
  const got = await consume(1);
  jest.restoreAllMocks();
  expect({ got, rest: await consume(10) }).toEqual({ got: [200, ['one']], rest: [200, ['two']] });
});

it('answers 503 SERVICE_UNAVAILABLE, never 500, when every try of the move is cancelled as throttled', async () => {
  const { consume, publish } = await newSubscription(t);
  expect(await consume(1)).toEqual([200, []]);
  await publish('one');
  let throttling = true;
  failMoves(throttledCancel, () => throttling);
  const got = await consume(1);
  throttling = false;
  // The move did not apply (every try cancelled): the next consume gets the message.
  expect({ got, next: await consume(1) }).toEqual({ got: [503, 'SERVICE_UNAVAILABLE'], next: [200, ['one']] });
});
