/**
 * A held message (delay beyond 900 s) reaching a webhook end to end (docs/schedules.md): the real
 * gateway and handlers on DynamoDB Local, the local webhook delivery (delivery queue on fauxqs,
 * event source, retry workflow) and a receiver on 127.0.0.1. The scheduler tick is the real handler
 * (lambda/handlers/scheduler.ts) with its clock set to the due time instead of waiting hours: the
 * engines are never mocked, only the tick's clock moves.
 */
import { createHmac } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { afterIndexLag } from '../fixtures/harsh-waits';
import { schedulerHandler } from '../../lambda/handlers/scheduler';
import { metrics, METRIC } from '../../lambda/core/observability';
import type { TickStats } from '../../lambda/schedules/tick';
import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { TABLES } from '../../lambda/core/storage/tables';

jest.setTimeout(60_000);

const HOUR = 3600;
const bed = webhookTestbed('dlw');

const context = { functionName: 'scheduler', awsRequestId: 'test', getRemainingTimeInMillis: () => 60_000 } as unknown as Context;

/**
 * Runs the scheduler Lambda handler as if it were `now`, once what it reads through the due index
 * is visible there (the index lags, as in AWS); returns its stats and the count metrics it recorded.
 */
async function tickAt(now: number): Promise<{ stats: TickStats; counted: Record<string, number> }> {
  await afterIndexLag();
  const counted: Record<string, number> = {};
  const single = { addDimension: () => undefined, addMetadata: () => undefined, addMetric: (name: string, _unit: unknown, value: number) => void (counted[name] = (counted[name] ?? 0) + value) };
  const spy = jest.spyOn(metrics, 'singleMetric').mockImplementation(() => single as unknown as ReturnType<typeof metrics.singleMetric>);
  try {
    const stats = (await schedulerHandler({ clock: { now: () => now } })({}, context)) as TickStats;
    return { stats, counted };
  } finally {
    spy.mockRestore();
  }
}

async function publish(topic: string, body: Record<string, unknown>) {
  const res = await bed.call('POST', `/topics/${topic}/messages`, body);
  expect(res.status).toBe(201);
  return res.body.data as { message_id: string };
}

describe('a held message and its webhook', () => {
  it('is delivered once, at its time, with its body and valid signatures', async () => {
    const recv = await bed.receivers.start();
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, headers: { 'X-Signature': '{{.signature}}' } });
    const deliverAt = Date.now() + 2 * HOUR * 1000;
    const { message_id } = await publish(topic, { payload: '{"renew":"certificate"}', content_type: 'application/json', properties: { tenant: 'a' }, deliver_at: new Date(deliverAt).toISOString() });

    // Held: the tick before its window hands nothing to the webhook.
    await tickAt(deliverAt - 20 * 60_000);
    // The tick runs as if 3 s before the due time: the delivery job waits out the rest in SQS.
    const tickStart = Date.now();
    const { stats } = await tickAt(deliverAt - 3000);
    expect(stats.delayed.handed).toBeGreaterThanOrEqual(1);
    const [req] = await recv.waitFor(1, 20_000);
    // Not before its time (the job's DelaySeconds is whole seconds, so at most 1 s early), and so
    // not handed by the earlier tick either. Judged by the request's arrival, not by whether it
    // had arrived when the tick returned: on loaded cores a tick can take longer than the 3 s.
    expect(req.at - tickStart).toBeGreaterThanOrEqual(2000);

    const body = JSON.parse(req.body.toString('utf8'));
    expect(body).toMatchObject({ message_id, topic, payload: '{"renew":"certificate"}', properties: { tenant: 'a' } });
    expect(req.headers['x-signature']).toBe(`v1=${createHmac('sha256', w.secret).update(req.body).digest('hex')}`);
    const key = Buffer.from(w.secret.slice('whsec_'.length), 'base64');
    expect(req.headers['webhook-id']).toBeTruthy();
    const signed = `${req.headers['webhook-id']}.${req.headers['webhook-timestamp']}.${req.body.toString('utf8')}`;
    expect(req.headers['webhook-signature']).toBe(`v1,${createHmac('sha256', key).update(signed).digest('base64')}`);

    // Once: later ticks hand nothing over again, and the delivery is counted as one success.
    await tickAt(deliverAt + 1000);
    await until(async () => (await bed.call('GET', `/webhooks/${w.name}/status`)).body.data.success_count === 1, 10_000, 'one success counted');
    await new Promise((r) => setTimeout(r, 1500));
    expect(recv.requests).toHaveLength(1);
    const cancel = await bed.call('DELETE', `/messages/${message_id}/delivery`);
    expect(cancel.status).toBe(409);
    expect(cancel.body.error?.details.state).toBe('sent');
  });

  it('is dropped and counted when its webhook was deleted before it came due, and a new webhook of the same name gets nothing', async () => {
    const recv = await bed.receivers.start();
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic });
    const due = Date.now() + 3 * HOUR * 1000;
    const { message_id } = await publish(topic, { payload: 'orphan', delay_seconds: 3 * HOUR });
    expect((await bed.call('DELETE', `/webhooks/${w.name}`)).status).toBe(200);
    // Another incarnation under the same name, on the same topic: it must not get the old message.
    expect((await bed.call('POST', '/webhooks', { name: w.name, url: recv.url, topic_filter: topic })).status).toBe(201);

    const { stats, counted } = await tickAt(due);
    expect(stats.delayed.dropped).toBeGreaterThanOrEqual(1);
    expect(counted[METRIC.delayedDropped]).toBe(stats.delayed.dropped);
    const cancel = await bed.call('DELETE', `/messages/${message_id}/delivery`);
    expect(cancel.status).toBe(409);
    expect(cancel.body.error?.details.state).toBe('dropped');
    await new Promise((r) => setTimeout(r, 2000));
    expect(recv.requests).toHaveLength(0);
  });

  it('leaves the due index when its webhook holds a secret that cannot be opened: the delivery fails with the field named, the handover does not', async () => {
    const recv = await bed.receivers.start();
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, headers: { 'X-Token': 'tok' }, retry_count: 0 });
    const raw = new DynamoDBClient({ endpoint: process.env.MSG_DYNAMODB_ENDPOINT, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    try {
      const Key = { pk: { S: `NS#${bed.ns.name}` }, sk: { S: `WEBHOOK#${w.name}` } };
      const item = unmarshall((await raw.send(new GetItemCommand({ TableName: TABLES.meta.localName, Key }))).Item!);
      const parts = String(item.config.headers['X-Token']).split('.');
      parts[3] = Buffer.from('changed').toString('base64url');
      item.config.headers['X-Token'] = parts.join('.');
      await raw.send(new PutItemCommand({ TableName: TABLES.meta.localName, Item: marshall(item) }));
    } finally {
      raw.destroy();
    }
    const deliverAt = Date.now() + 2 * HOUR * 1000;
    await publish(topic, { payload: 'x', deliver_at: new Date(deliverAt).toISOString() });
    const { stats } = await tickAt(deliverAt - 1000);
    expect(stats.delayed).toMatchObject({ handed: 1, failed: 0 });
    await until(async () => (await bed.call('GET', `/webhooks/${w.name}/status`)).body.data.failure_count === 1, 15_000, 'the delivery failed');
    expect((await bed.call('GET', `/webhooks/${w.name}/status`)).body.data.last_error).toMatch(/headers\.X-Token cannot be opened/);
    // Nothing is left to hand over: a later tick finds nothing of it.
    expect((await tickAt(deliverAt + 60_000)).stats.delayed).toMatchObject({ handed: 0, failed: 0 });
    expect(recv.requests).toHaveLength(0);
  });
});
