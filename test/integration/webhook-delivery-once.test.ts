/**
 * lambda/webhooks/storage/webhook-delivery-once.ts against DynamoDB Local: the hand-off's take counts its
 * pending retry in the same transaction, so a take whose every answer was lost has counted, and
 * any later try of it (the job back, a copy) counts nothing more; the end's hook is claimed by one
 * run at a time, and a claim whose holder died lapses.
 */
import { randomUUID } from 'node:crypto';
import { readWebhookCounters } from '../../lambda/webhooks/storage/webhook-counters';
import { handoffCounts, markEnded, readDelivery, recordRetrying } from '../../lambda/webhooks/storage/webhook-deliveries';
import { claimHook, releaseHook, takeHandoff } from '../../lambda/webhooks/storage/webhook-delivery-once';
import { injectDynamoFault } from '../fixtures/dynamo-calls';

jest.setTimeout(60_000);

const delivery = () => ({ namespace: `once-${randomUUID().slice(0, 8)}`, webhookId: randomUUID(), messageId: randomUUID() });
const pending = async (k: { namespace: string; webhookId: string }) => (await readWebhookCounters(k.namespace, k.webhookId)).status.pending_retries ?? 0;

it('counts a first hand-off once when its take applied and every answer was lost, then answers its repeats as applied', async () => {
  const k = delivery();
  const now = Date.now();
  await recordRetrying(k, { nextRetry: now + 1000, error: 'HTTP 500', now, queued: 1 });
  const expected = handoffCounts({ nextRetry: now + 1000, error: 'HTTP 500', now, first: true });
  const lost = injectDynamoFault({ when: (c) => /^TransactWrite/.test(c.command) && JSON.stringify(c.input).includes(k.messageId), mode: 'after', times: 100, name: 'InternalServerError' });
  lost.arm();
  await expect(takeHandoff(k, 1, expected)).rejects.toMatchObject({ name: 'InternalServerError' });
  lost.stop();
  expect((await readDelivery(k))?.handoff_uncounted).toBeUndefined();
  expect(await pending(k)).toBe(1);
  // The job back, or a copy, sends the same take: the same token, so it answers as applied and adds nothing.
  expect(await takeHandoff(k, 1, expected)).toEqual(expected);
  expect(await pending(k)).toBe(1);
});

it('refuses the take of another hand-off than the one noted', async () => {
  const k = delivery();
  const now = Date.now();
  await recordRetrying(k, { nextRetry: now + 1000, error: 'HTTP 500', now, queued: 2 });
  expect(await takeHandoff(k, 1, handoffCounts({ nextRetry: now + 1000, error: 'HTTP 500', now, first: true }))).toBe('taken');
  expect(await pending(k)).toBe(0);
  expect((await readDelivery(k))?.handoff_uncounted).toBeDefined();
});

it('lets one run claim the hook at a time, its own repeat too, another once the claim lapsed, and none once ended', async () => {
  const k = delivery();
  const now = Date.now();
  await recordRetrying(k, { nextRetry: now, error: 'x', now, queued: 1 });
  expect(await claimHook(k, 'a', now, now + 60_000)).toBe('mine');
  expect(await claimHook(k, 'a', now, now + 60_000)).toBe('mine');
  expect(await claimHook(k, 'b', now + 1000, now + 61_000)).toBe('held');
  await releaseHook(k, 'b');
  expect(await claimHook(k, 'b', now + 1000, now + 61_000)).toBe('held');
  // The holder died: its claim lapses at its lease's end.
  expect(await claimHook(k, 'b', now + 60_001, now + 120_000)).toBe('mine');
  await releaseHook(k, 'b');
  expect(await claimHook(k, 'c', now + 60_002, now + 120_000)).toBe('mine');
  expect(await markEnded(k)).toBe(true);
  expect(await claimHook(k, 'd', now + 200_000, now + 260_000)).toBe('ended');
});
