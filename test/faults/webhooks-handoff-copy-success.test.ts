/**
 * Two SQS copies of one job at once: one's POST fails and hands off, the other's succeeds.
 *
 * Scenario: SQS hands out two copies of a first job at once (it delivers at least once), and both
 * POST (docs/webhooks.md "Guarantees" allows a second POST only here). Copy A's POST fails: it
 * notes the hand-off (`retrying`, its counts in `handoff_uncounted`) and goes to take the counts
 * (lambda/webhooks/retry-handoff.ts `countHandoff`). Copy B's POST succeeds: its end meets A's
 * note, so it is recorded from `retrying` and gives a pending retry back (storage/
 * webhook-deliveries.ts `recordFinal`: pending -1), and its put carries no `handoff_uncounted`.
 * A's take lands after that (here: held until the record says success) and finds nothing to
 * take: the pending retry it noted is never counted, its give-back is.
 *
 * Expected (design record 17: "every end from retrying, which gives the pending retry back,
 * follows its count"; docs/webhooks.md: each delivery counts once): one success, `pending_retries`
 * 0. Before the fix: -1 (before the counts moved onto the note, A counted its +1 right after
 * its put). Now B's end takes the hand-off's count first, if no take did
 * (lambda/webhooks/storage/webhook-delivery-once.ts `settleHandoff`), and A's take then finds it taken.
 *
 * The holds wait in the client (`holdAt: 'client'`): a write held just before the engine was
 * already in flight for the local transaction-conflict emulation (local/aws-harsh/
 * dynamodb-transactions.ts), so B's held put cancelled A's take, whose next try was not held,
 * and A's execution started before B's end; its retry job then met `retrying` and POSTed. The
 * queue's visibility is the delivery function's timeout, the least AWS lets an event source
 * mapping have: a copy is not received again while its batch still runs (a hold here lasts seconds).
 */
import { until } from '../fixtures/receiver';
import { unique } from '../fixtures/queues';
import { DELIVERY_TIMEOUT_SECONDS } from '../../lambda/webhooks/storage/delivery-queue';
import { deliveryOf, handoffFixture, handoffWebhook, isTake, publish, twoCopies } from './handoff-fixture';

jest.setTimeout(90_000);

// https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html: the queue's visibility timeout must be at least the function's timeout.
const f = handoffFixture('whcopysuccess', { visibilitySeconds: DELIVERY_TIMEOUT_SECONDS, seed: 4714, sqsSeed: 4715 });

it('a copy\'s success recorded over the other copy\'s hand-off before its take leaves no pending retry', async () => {
  const topic = unique('t');
  // Both copies' POSTs are answered once both arrived: the first fails, the second succeeds.
  const { recv, webhookId, counts } = await handoffWebhook(f, twoCopies(f, topic, 1), { retry_count: 2, retry_delay: 1, backoff_multiplier: 1 }, topic);
  let id = '';
  const outcome = async () => (await deliveryOf(f, webhookId, id))?.outcome;
  // B's end is written once A's note is; A's take once B's end is.
  f.injector.addLatency({
    service: 'dynamodb', command: 'PutItemCommand', ms: 0, holdAt: 'client',
    matches: (input) => JSON.stringify(input.Item ?? {}).includes('"success"') && JSON.stringify(input.Item ?? {}).includes(webhookId),
    hold: () => until(async () => (await outcome()) !== undefined, 30_000, 'the hand-off noted').then(() => undefined),
  });
  // A's take is the first take of the hand-off (B's end takes it too, first: the same request).
  let takes = 0;
  let aTake = 'not held';
  f.injector.addLatency({
    service: 'dynamodb', command: 'TransactWriteItemsCommand', ms: 0, holdAt: 'client',
    matches: (input) => isTake(webhookId)(input) && ++takes === 1,
    hold: () => until(async () => (await outcome()) === 'success', 30_000, 'the success recorded').then(() => void (aTake = 'released by the success'), () => void (aTake = 'hold timed out')),
  });
  id = await publish(f, topic, 'two copies');
  await until(async () => ((await counts()).success_count ?? 0) >= 1, 40_000, 'the success counted');
  // A's batch (its take, its execution's retry job finding the success) ends a moment later.
  await new Promise((r) => setTimeout(r, 8_000));
  const s = await counts();
  expect({ aTake, outcome: await outcome(), posts: recv.requests.length, success: s.success_count ?? 0, pending: s.pending_retries ?? 0 }).toEqual({ aTake: 'released by the success', outcome: 'success', posts: 2, success: 1, pending: 0 });
});
