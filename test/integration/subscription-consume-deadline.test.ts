/**
 * A subscription consume bounded by its answer deadline (`answerBy`: API Gateway's 29 s
 * integration timeout less the answer's reserve, or the Lambda's end): no attempt of its cursor
 * move (lambda/subscriptions/storage/subscriptions.ts `moveCursor`), of its read of the cursor, of
 * a page of the log's chunks or of the head after a long poll's wait may begin after it, or the consume answers after API Gateway gave
 * up (504) or the Lambda ended. Every attempt of the call under test is refused here: the move's
 * `TransactionInProgressException`, a read's `ProvisionedThroughputExceededException`, both of
 * which the SDK retries as throttles with its own backoff, up to 2^n x 500 ms at full jitter
 * (https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html); Math.random at
 * its largest draw (0.99) makes those waits their longest, as the move's other test makes them
 * their shortest. A consume cut off so is answered as the move's other failures (503
 * SERVICE_UNAVAILABLE, lambda/core/middleware/envelope.ts) and leaves the batch to the next
 * consume.
 */
import type { FinalizeRequestMiddleware, Pluggable } from '@smithy/types';
import { registerClientPlugin } from '../../lambda/core/client-plugins';
import { isPassingDependencyFailure } from '../../lambda/core/rules/dependency-errors';
import { getSubscription, moveCursor } from '../../lambda/subscriptions/storage/subscriptions';
import { consumeSubscription } from '../../lambda/subscriptions/operations';
import { reserveBlock } from '../../lambda/logs/storage/log-reservations';
import { PENDING_SETTLE_MS } from '../../lambda/logs/rules/log-horizon';
import { namespaceTestbed } from '../fixtures/testbed';
import { unique } from '../fixtures/queues';

jest.setTimeout(30_000);

const { ns, call } = namespaceTestbed('movedl');

/** Which DynamoDB call is refused (by command name and input), and with what. */
interface Refusal {
  command: string;
  matches: (input: string) => boolean;
  error: string;
  /** Matching calls let through before the refusals begin. */
  skip?: number;
}
const MOVE: Refusal = { command: 'TransactWriteItemsCommand', matches: (i) => i.includes('CURSOR#'), error: 'TransactionInProgressException' };
const CURSOR_READ: Refusal = { command: 'GetItemCommand', matches: (i) => i.includes('CURSOR#'), error: 'ProvisionedThroughputExceededException' };
const CHUNK_PAGE: Refusal = { command: 'QueryCommand', matches: (i) => i.includes('#last BETWEEN :lo AND :hi'), error: 'ProvisionedThroughputExceededException' };

/** A strong read of log `id`'s head (lambda/logs/storage/log-waits.ts polls read it eventually consistently). */
const strongHeadRead = (id: string): Refusal => ({
  command: 'GetItemCommand',
  matches: (i) => i.includes(`LOG#${id}"`) && i.includes('"#HEAD"') && i.includes('"ConsistentRead":true'),
  error: 'ProvisionedThroughputExceededException',
});

/** Send times of the refused call's attempts (inside the SDK's retry loop: one per attempt). */
const attempts: number[] = [];
let refusing: Refusal | undefined;
let passed = 0;
const refuse: FinalizeRequestMiddleware<any, any> = (next, context) => async (args) => {
  if (!refusing || context.commandName !== refusing.command || !refusing.matches(JSON.stringify(args.input))) return next(args);
  if (passed++ < (refusing.skip ?? 0)) return next(args);
  attempts.push(Date.now());
  throw Object.assign(new Error(`${refusing.error} (injected)`), { name: refusing.error, $fault: 'client', $metadata: { httpStatusCode: 400 } });
};
const plugin: Pluggable<any, any> = { applyToStack: (stack) => stack.add(refuse, { step: 'finalizeRequest', priority: 'low', name: 'testRefuse' }) };
registerClientPlugin('dynamodb', plugin);

/** Subscription `sub` of topic `topic`, with one message published to it. */
async function subscriptionWithOne() {
  const topic = unique('t');
  const sub = unique('u');
  expect((await call('POST', '/subscriptions', { name: sub, topic_filter: topic })).status).toBe(201);
  expect((await call('POST', `/topics/${topic}/messages`, { payload: 'one' })).status).toBe(201);
  return { topic, sub };
}

/** Subscriber `a`'s next consume of `sub` through the API: its status and payloads. */
async function nextConsume(sub: string) {
  const next = await call('POST', `/subscriptions/${sub}/messages/consume`, { subscriber_id: 'a', max_messages: 10, timeout_seconds: 0 });
  return [next.status, next.body.data?.messages?.map((m: { payload: string }) => m.payload)];
}

/** Runs `fn` with every attempt of `r`'s call refused and the SDK's longest backoff draws. */
async function refused<T>(r: Refusal, fn: () => Promise<T>): Promise<T> {
  attempts.length = 0;
  passed = 0;
  refusing = r;
  jest.spyOn(Math, 'random').mockReturnValue(0.99);
  try {
    return await fn();
  } finally {
    refusing = undefined;
    jest.restoreAllMocks();
  }
}

const failure = (e: Error) => ({ name: e.name, answered503: isPassingDependencyFailure(e) });

it('begins no attempt of a move after the answer deadline, whatever the SDK waits between its attempts, and ends at the deadline', async () => {
  const now = Date.now();
  const answerBy = now + 300;
  const outcome = await refused(MOVE, () => moveCursor(ns.name, `sub-${now}`, 'a', undefined, 1, now, 60_000, answerBy).then(() => 'moved', failure));
  // Before: attempts 0.7, 2.7 and 6.7 s after the deadline, then TransactionInProgressException.
  expect({ outcome, afterDeadline: attempts.filter((t) => t > answerBy).map((t) => t - answerBy), endedLate: Date.now() - answerBy > 1_000 }).toEqual({
    outcome: { name: 'TimeoutError', answered503: true },
    afterDeadline: [],
    endedLate: false,
  });
  expect(attempts.length).toBeGreaterThan(0);
});

it.each([
  ['cursor move', MOVE],
  ['read of the cursor', CURSOR_READ],
  ['read of a page of chunks', CHUNK_PAGE],
])('answers a consume whose %s the deadline cut off as a passing failure (503), with no attempt after it, and the next consume gets the same message', async (_, r) => {
  const { sub } = await subscriptionWithOne();
  const deadlineMs = Date.now() + 600;
  const got = await refused(r, () =>
    consumeSubscription(ns.name, sub, { subscriber_id: 'a', max_messages: 1, timeout_seconds: 0, deadlineMs }).then((m) => m.map((x) => x.payload), failure),
  );
  const tried = attempts.length;
  const late = attempts.filter((t) => t > deadlineMs).map((t) => t - deadlineMs);
  expect({ got, late, next: await nextConsume(sub) }).toEqual({ got: { name: 'TimeoutError', answered503: true }, late: [], next: [200, ['one']] });
  expect(tried).toBeGreaterThan(0);
});

it('answers a consume whose read of the head after settling a dead block the deadline cut off as a passing failure (503), with no attempt after it', async () => {
  const { topic, sub } = await subscriptionWithOne();
  const id = (await getSubscription(ns.name, sub))!.id;
  // A publish that died right after reserving, and one after it that dates it: dead once PENDING_SETTLE_MS have passed.
  await reserveBlock({ namespace: ns.name, id }, { count: 1, bytes: 2 });
  expect((await call('POST', `/topics/${topic}/messages`, { payload: 'two' })).status).toBe(201);
  // The consume's first strong head read is its lookup of the subscription; the second, the settle's.
  const HEAD_AFTER_SETTLE: Refusal = { ...strongHeadRead(id), skip: 1 };
  const realNow = Date.now.bind(Date);
  let deadlineMs = 0;
  const got = await refused(HEAD_AFTER_SETTLE, () => {
    jest.spyOn(Date, 'now').mockImplementation(() => realNow() + PENDING_SETTLE_MS + 1_000);
    deadlineMs = Date.now() + 600;
    return consumeSubscription(ns.name, sub, { subscriber_id: 'a', max_messages: 1, timeout_seconds: 0, deadlineMs }).then((m) => m.map((x) => x.payload), failure);
  });
  const tried = attempts.length;
  const late = attempts.filter((t) => t > deadlineMs).map((t) => t - deadlineMs);
  expect({ got, late, next: await nextConsume(sub) }).toEqual({ got: { name: 'TimeoutError', answered503: true }, late: [], next: [200, ['one', 'two']] });
  expect(tried).toBeGreaterThan(0);
});

it('answers a long poll whose strong read of the head in or after its wait the deadline cut off as a passing failure (503), with no attempt after it', async () => {
  const topic = unique('t');
  const sub = unique('u');
  expect((await call('POST', '/subscriptions', { name: sub, topic_filter: topic })).status).toBe(201);
  const id = (await getSubscription(ns.name, sub))!.id;
  // The strong read that follows news, or the wait's own when a poll (1 s stale, local/aws-harsh/dynamodb-reads.ts) misses the new head.
  const HEAD_AFTER_WAIT = strongHeadRead(id);
  const deadlineMs = Date.now() + 1_500;
  const consuming = consumeSubscription(ns.name, sub, { subscriber_id: 'a', max_messages: 1, timeout_seconds: 1, deadlineMs }).then((m) => m.map((x) => x.payload), failure);
  await new Promise((r) => setTimeout(r, 100));
  const got = await refused(HEAD_AFTER_WAIT, async () => {
    expect((await call('POST', `/topics/${topic}/messages`, { payload: 'one' })).status).toBe(201);
    return consuming;
  });
  const tried = attempts.length;
  const late = attempts.filter((t) => t > deadlineMs).map((t) => t - deadlineMs);
  expect({ got, late, next: await nextConsume(sub) }).toEqual({ got: { name: 'TimeoutError', answered503: true }, late: [], next: [200, ['one']] });
  expect(tried).toBeGreaterThan(0);
});
