/**
 * Render budgets end to end: headers that can never fit their rendered budget are refused at
 * create with 422 on `headers`; a delivery whose headers would render past it fails alone, with
 * the reason on its status, while another webhook of the same message is delivered. The memory
 * bound itself is measured in test/unit/render-budgets.test.ts.
 */
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { until } from '../fixtures/receiver';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { MAX_PAYLOAD_BYTES } from '../../lambda/core/rules/message';

jest.setTimeout(60_000);

const bed = webhookTestbed('wrb');

describe('render budgets', () => {
  it('refuses at create headers whose text alone exceeds 16 KiB, naming the field', async () => {
    const headers = Object.fromEntries(Array.from({ length: 3 }, (_, i) => [`X-H${i}`, 'v'.repeat(6000)]));
    const res = await bed.call('POST', '/webhooks', { name: unique('wh'), url: 'http://127.0.0.1:9/x', topic_filter: 't', headers });
    expect(res.status).toBe(422);
    expect(res.body.error?.code).toBe('VALIDATION_ERROR');
    expect(JSON.stringify(res.body.error?.details)).toMatch(/headers.*16384/);
  });

  it('fails one delivery whose headers would render past the budget, with the reason, and delivers the others', async () => {
    const good = await bed.receivers.start();
    const bad = await bed.receivers.start();
    const topic = unique('t');
    const big = await createWebhook(bed.call, { url: bad.url, topic_filter: topic, headers: { 'X-Big': '{{.payload}}'.repeat(682) }, max_payload_size: 1048576 });
    await createWebhook(bed.call, { url: good.url, topic_filter: topic });
    const payload = 'p'.repeat(MAX_PAYLOAD_BYTES - 1024);
    expect((await bed.call('POST', `/topics/${topic}/messages`, { payload })).status).toBe(201);
    const [req] = await good.waitFor(1);
    expect(JSON.parse(req.body.toString()).payload).toBe(payload);
    let status: Record<string, unknown> = {};
    await until(async () => {
      status = (await bed.call('GET', `/webhooks/${big.name}/status`)).body.data;
      return status.failure_count === 1;
    });
    expect(status).toMatchObject({ last_error: expect.stringMatching(/^headers too large: \d+ bytes rendered, over 16384$/), next_retry: null });
    expect(bad.requests.length).toBe(0);
  });
});
