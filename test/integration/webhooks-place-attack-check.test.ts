/**
 * The webhook's place check (`max_in_flight`) is what hands on a place whose attempt never gave
 * it back (a crashed container: its lease lapses). An SQS send of the check that fails once (a
 * throttled or failed SendMessageBatch) must not leave the waiting delivery waiting for good.
 */
import type { MiddlewareStack } from '@smithy/types';
import { startReceiver, until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { sqsClient } from '../../lambda/core/adapters/sqs';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { oldestWaiting } from '../../lambda/webhooks/storage/webhook-waiting';
import { readPlaces, takeInFlight } from '../../lambda/webhooks/storage/webhook-limits';

jest.setTimeout(240_000);

const bed = webhookTestbed('wpcheck', { visibilitySeconds: 5 });

/** Fails the `nth` (1-based) SendMessageBatch carrying a place check of `webhookId` (before it reaches SQS); counts the check sends. */
function failCheckSend(webhookId: string, nth: number) {
  const name = `fail-check-${Math.random()}`;
  let seen = 0;
  const failed: number[] = [];
  (sqsClient().middlewareStack as unknown as MiddlewareStack<object, object>).add(
    (next, context) => async (args) => {
      if ((context as { commandName?: string }).commandName === 'SendMessageBatchCommand') {
        const entries = (args as { input: { Entries?: { MessageBody?: string }[] } }).input.Entries ?? [];
        if (entries.some((e) => (e.MessageBody ?? '').includes('"place_check"') && (e.MessageBody ?? '').includes(webhookId))) {
          seen++;
          if (seen === nth) {
            failed.push(Date.now());
            throw Object.assign(new Error('injected SQS fault on the place check send'), { name: 'ServiceUnavailable', $fault: 'server', $metadata: { httpStatusCode: 503 } });
          }
        }
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  return { sends: () => seen, failed, stop: () => (sqsClient().middlewareStack as unknown as MiddlewareStack<object, object>).remove(name) };
}

async function lostPlace(leaseMs: number, nth: number) {
  const rx = await startReceiver();
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: rx.url, topic_filter: topic, retry_count: 0, timeout: 1, max_in_flight: 1 });
  const stored = (await getWebhook(bed.ns.name, w.name))!;
  // The only place, held by an attempt whose container ended: its lease lapses, never given back.
  expect(await takeInFlight(bed.ns.name, stored.id, 1, ['lost'], Date.now() + leaseMs)).toEqual(['lost']);
  const fault = failCheckSend(stored.id, nth);
  const published = Date.now();
  expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'late' })).status).toBe(201);
  await until(async () => (await oldestWaiting(bed.ns.name, stored.id, 1)).length === 1, 30_000, 'the delivery waits for a place');
  const got = await until(async () => rx.requests.length > 0, 150_000, 'the waiting delivery POSTed').catch(() => false);
  const places = await readPlaces(bed.ns.name, stored.id);
  const left = (await oldestWaiting(bed.ns.name, stored.id, 1)).length;
  console.log(
    `lease lapsing after ${leaseMs} ms, check send #${nth} failed (${fault.failed.length} failed, ${fault.sends()} sends): ` +
      `${got ? `POSTed ${rx.requests[0].at - published} ms after its publish` : `not POSTed after ${Date.now() - published} ms`}, still waiting ${left}, count ${places.waiting}, live ${places.live}, check noted ${places.checkAt ?? '-'}`,
  );
  fault.stop();
  await rx.close();
  return { got, failed: fault.failed.length };
}

it('the first place check send fails once: the waiting delivery still goes once the lost lease lapses', async () => {
  const r = await lostPlace(3_000, 1);
  expect(r.failed).toBe(1);
  expect(r.got).toBe(true);
});

it('a later place check send fails once (the check carrying on): the waiting delivery still goes once the lost lease lapses', async () => {
  // The lease outlives the first check (15 s), so the check must come back again.
  const r = await lostPlace(20_000, 2);
  expect(r.failed).toBe(1);
  expect(r.got).toBe(true);
});
