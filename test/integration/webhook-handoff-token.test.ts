/**
 * lambda/webhooks/storage/webhook-delivery-once.ts `takeHandoff` against DynamoDB Local: its token is to
 * be the same at every try and copy ("identical request on every try"), so a take that applied
 * with its answers lost answers as applied when tried again (for the token's 10 minutes,
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html#DDB-TransactWriteItems-request-ClientRequestToken),
 * and its caller counts the hand-off's next retry and error (retry-handoff.ts `countHandoff`).
 *
 * Scenario: the take's first try is cancelled on a conflict (another take of the same webhook
 * on the same hand-off counter item, or a fold, https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling).
 * lambda/core/storage/client.ts `transactWrite` then swaps the caller's token for a random one (nothing was
 * applied yet), so the next try, applied with every answer lost, carries that random token; the
 * job back sends the derived token, which never applied: refused by the record's condition, it
 * answers `taken`, and countHandoff counts neither the next retry nor the error nor the metric.
 */
import { randomUUID } from 'node:crypto';
import { readWebhookCounters } from '../../lambda/webhooks/storage/webhook-counters';
import { handoffCounts, readDelivery, recordRetrying } from '../../lambda/webhooks/storage/webhook-deliveries';
import { takeHandoff } from '../../lambda/webhooks/storage/webhook-delivery-once';
import { injectDynamoFault, type RecordedCall } from '../fixtures/dynamo-calls';

jest.setTimeout(60_000);

it('answers a take applied with its answers lost after a conflict as applied when the job comes back', async () => {
  const k = { namespace: `token-${randomUUID().slice(0, 8)}`, webhookId: randomUUID(), messageId: randomUUID() };
  const now = Date.now();
  await recordRetrying(k, { nextRetry: now + 1000, error: 'HTTP 500', now, queued: 1 });
  const expected = handoffCounts({ nextRetry: now + 1000, error: 'HTTP 500', now, first: true });
  const take = (c: RecordedCall) => /^TransactWrite/.test(c.command) && JSON.stringify(c.input).includes(k.messageId);
  const conflict = injectDynamoFault({ when: take, mode: 'before', times: 1, name: 'TransactionCanceledException', fields: { CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict' }] } });
  const lost = injectDynamoFault({ when: take, mode: 'after', times: 100, name: 'InternalServerError' });
  const tokens: string[] = [];
  const seen = injectDynamoFault({ when: (c) => take(c) && (tokens.push(String(c.input.ClientRequestToken)), false), mode: 'before' });
  conflict.arm();
  lost.arm();
  seen.arm();
  try {
    await expect(takeHandoff(k, 1, expected)).rejects.toMatchObject({ name: 'InternalServerError' });
  } finally {
    conflict.stop();
    lost.stop();
  }
  expect((await readDelivery(k))?.handoff_uncounted).toBeUndefined();
  expect((await readWebhookCounters(k.namespace, k.webhookId)).status.pending_retries).toBe(1);
  // The job back (or a copy) sends the take again: it applied, so it should answer as applied.
  const again = await takeHandoff(k, 1, expected);
  seen.stop();
  expect({ again, tokens: new Set(tokens).size }).toEqual({ again: expected, tokens: 1 });
});
