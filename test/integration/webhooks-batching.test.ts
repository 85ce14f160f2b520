/**
 * What a delivery batch costs (docs/design/0018-webhook-delivery-writes.md): the delivery function
 * reads each webhook once per batch and the batch's delivery records with one strongly consistent
 * BatchGetItem, not once per job; and the local event source gathers batches larger than one
 * receive within its batching window, as Lambda's SQS event source mapping does.
 */
import { randomUUID } from 'node:crypto';
import type { SQSEvent } from 'aws-lambda';
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { until } from '../fixtures/receiver';
import { recordDynamoCalls } from '../fixtures/dynamo-calls';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { ensureDeliveryQueues } from '../../local/webhooks';
import { LocalSqsEventSource } from '../../local/event-source';
import { sqsClient } from '../../lambda/core/adapters/sqs';

jest.setTimeout(60_000);

const bed = webhookTestbed('whb');

describe('a delivery batch', () => {
  it('reads its webhook once per batch and its delivery records in one strongly consistent call, and POSTs each message once', async () => {
    const recv = await bed.receivers.start();
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic });
    const rec = recordDynamoCalls();
    try {
      const res = await bed.call('POST', `/topics/${topic}/messages/batch`, { messages: Array.from({ length: 20 }, (_, i) => ({ payload: `{"i":${i}}` })) });
      expect(res.status).toBe(201);
      const got = await recv.waitFor(20, 30_000);
      const ids = got.map((r) => r.headers['webhook-id']);
      expect(new Set(ids).size).toBe(20);
      await until(async () => (await bed.call('GET', `/webhooks/${w.name}/status`)).body.data.success_count === 20, 15_000, 'the 20 deliveries counted');
      expect(recv.requests).toHaveLength(20);

      // Per job, the old path read the webhook and the record with a GetItem each (20 + 20).
      const webhookReads = rec.getsOf(`WEBHOOK#${w.name}`);
      expect(webhookReads.length).toBeLessThan(10);
      expect(webhookReads.filter((g) => g.input.ConsistentRead !== true)).toEqual([]);
      expect(rec.getsOf('#DELIVERY')).toEqual([]);
      const recordReads = rec.calls.filter((c) => /^BatchGetItem/.test(c.command) && JSON.stringify(c.input).includes('#DELIVERY'));
      expect(recordReads.length).toBeGreaterThan(0);
      expect(recordReads.length).toBeLessThan(10);
      for (const c of recordReads) for (const t of Object.values(c.input.RequestItems) as { ConsistentRead?: boolean }[]) expect(t.ConsistentRead).toBe(true);
    } finally {
      rec.stop();
    }
  });
});

describe('the local event source with a batching window', () => {
  /** A queue of its own with `n` messages waiting, and an event source on it handing batches to `batches`. */
  async function source(o: { batchSize: number; windowMs: number; waiting: number }) {
    const q = await ensureDeliveryQueues(`window-${randomUUID()}`, 30);
    const send = async (n: number) => {
      for (let i = 0; i < n; i += 10) {
        const entries = Array.from({ length: Math.min(10, n - i) }, (_, j) => ({ Id: String(j), MessageBody: `m${i + j}` }));
        const out = await sqsClient().send(new SendMessageBatchCommand({ QueueUrl: q.url, Entries: entries }));
        expect(out.Failed ?? []).toEqual([]);
      }
    };
    await send(o.waiting);
    const batches: { size: number; at: number }[] = [];
    const events = new LocalSqsEventSource(
      async (e: SQSEvent) => {
        batches.push({ size: e.Records.length, at: Date.now() });
        return { batchItemFailures: [] };
      },
      { queueUrl: q.url, queueArn: q.arn, batchSize: o.batchSize, batchingWindowMs: o.windowMs, concurrency: 1 },
    );
    return { batches, send, events };
  }

  it('gathers a backlog into batches above the 10 messages of one receive', async () => {
    const s = await source({ batchSize: 20, windowMs: 3000, waiting: 25 });
    s.events.start();
    try {
      await until(async () => s.batches.reduce((n, b) => n + b.size, 0) >= 25, 20_000, 'the 25 messages handed over');
      expect(s.batches[0].size).toBe(20);
      expect(s.batches.reduce((n, b) => n + b.size, 0)).toBe(25);
      expect(Math.max(...s.batches.map((b) => b.size))).toBeLessThanOrEqual(20);
    } finally {
      await s.events.stop();
    }
  });

  it('hands a message that reaches an idle queue over without waiting for the window', async () => {
    const s = await source({ batchSize: 20, windowMs: 4000, waiting: 0 });
    s.events.start();
    try {
      // Idle for longer than the window: the window, begun when the poller became free, is over.
      await new Promise((r) => setTimeout(r, 4500));
      const sent = Date.now();
      await s.send(1);
      await until(async () => s.batches.length > 0, 20_000, 'the message handed over');
      expect(s.batches[0].size).toBe(1);
      // Before the 4 s window would end had it begun at the message (so at any speed of the
      // machine: the send comes after \`sent\`); 3 s left a loaded machine 1 s for the hand-over.
      expect(s.batches[0].at - sent).toBeLessThan(4000);
    } finally {
      await s.events.stop();
    }
  });
});
