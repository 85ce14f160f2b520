/**
 * Reads that decide on a webhook just written are strongly consistent, and concurrent PUTs and
 * PATCHes never lose one another's change (docs/webhooks.md).
 */
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { recordDynamoCalls } from '../fixtures/dynamo-calls';
import { webhookTestbed } from '../fixtures/webhook-testbed';

jest.setTimeout(30_000);

const bed = webhookTestbed('whc');


describe('reads of a webhook just written', () => {
  it('are strongly consistent at delivery, GET, status, PUT, PATCH and DELETE', async () => {
    const recv = await bed.receivers.start();
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic });
    const rec = recordDynamoCalls();
    try {
      expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'x' })).status).toBe(201);
      await recv.waitFor(1);
      expect((await bed.call('GET', `/webhooks/${w.name}`)).status).toBe(200);
      expect((await bed.call('GET', `/webhooks/${w.name}/status`)).status).toBe(200);
      expect((await bed.call('PUT', `/webhooks/${w.name}`, { url: recv.url, topic_filter: topic, retry_count: 1 })).status).toBe(200);
      expect((await bed.call('PATCH', `/webhooks/${w.name}`, { retry_count: 2 })).status).toBe(200);
      expect((await bed.call('DELETE', `/webhooks/${w.name}`)).status).toBe(200);
      const gets = rec.getsOf(`WEBHOOK#${w.name}`);
      // delivery, GET, status, PUT, PATCH, DELETE: at least one read each
      expect(gets.length).toBeGreaterThanOrEqual(6);
      expect(gets.filter((g) => g.input.ConsistentRead !== true)).toEqual([]);
    } finally {
      rec.stop();
    }
  });
});

describe('concurrent updates', () => {
  it('keep every PATCH: concurrent PATCHes of disjoint fields all land', async () => {
    const w = await createWebhook(bed.call, { url: 'https://hooks.example.com/in', topic_filter: unique('t'), enabled: false });
    const fields = [
      { retry_count: 9 }, { timeout: 7 }, { max_retry_delay: 60 }, { backoff_multiplier: 3 }, { method: 'PUT' }, { max_payload_size: 1000 },
      { retry_delay: 5 }, { compression: 'gzip' }, { dead_letter_topic: 'dlq/x' }, { headers: { 'X-A': '1' } },
    ];
    const res = await Promise.all(fields.map((f) => bed.call('PATCH', `/webhooks/${w.name}`, f)));
    expect(res.map((r) => r.status)).toEqual(fields.map(() => 200));
    // Each PATCH merged its field into the configuration it read: a lost update shows as a
    // field back at its old value.
    expect((await bed.call('GET', `/webhooks/${w.name}`)).body.data).toMatchObject(Object.assign({}, ...fields));
  });
});
