/**
 * Two changes of one webhook's `rate_limit` at once (two operators, a deploy tool): the write
 * that lands last is the configuration, and the rate's slots follow it from about 1 s after it
 * answered (docs/design/0020-webhook-delivery-limits.md). The slots are numbered under the newest
 * version of the webhook, ordered by its `updated_at`; a PATCH that started first but lost the
 * write race is written again on the item as it is then, and kept its older time, so the rate of
 * the PATCH it wrote over kept numbering the slots: 21 requests in one second at a `rate_limit`
 * of 2 (2 runs of 2), until the next change.
 */
import { createServer, type Server } from 'node:http';
import { until, worstSecond } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { queueApi, unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { slowDynamoAnswers } from '../fixtures/dynamo-calls';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';

jest.setTimeout(120_000);

const bed = webhookTestbed('wrateorder');
const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));


it('a PATCH to 2 whose write lands after a later PATCH to 20: 2 a second from 4 s after both answered', async () => {
  const at: number[] = [];
  const srv: Server = createServer((req, res) => {
    at.push(Date.now());
    req.resume();
    req.on('end', () => res.writeHead(200).end());
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  try {
    const url = `http://127.0.0.1:${(srv.address() as { port: number }).port}/hook`;
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url, topic_filter: topic, rate_limit: 10, retry_count: 0 });
    const q = queueApi(bed.call);
    for (let i = 0; i < 200; i += 100) await q.publishBatch(topic, Array.from({ length: 100 }, (_, j) => ({ payload: `m${i + j}` })));
    await until(async () => at.length >= 15, 30_000, 'the backlog flowing');
    // The lowering PATCH's first write reaches DynamoDB 2.5 s late (a throttled, retried call);
    // meanwhile the other PATCH, started 300 ms later, lands. The lowering one is then written
    // again over it, and is the configuration.
    const slow = slowDynamoAnswers({
      when: (c) => /TransactWrite/.test(c.command) && JSON.stringify(c.input).includes(`WEBHOOK#${w.name}`) && /"rate_limit":(2|\{"N":"2"\})[,}]/.test(JSON.stringify(c.input)),
      ms: (i) => (i === 0 ? 2500 : 0),
      timing: 'before',
    });
    slow.arm();
    try {
      const lowering = bed.call('PATCH', `/webhooks/${w.name}`, { rate_limit: 2 });
      await settle(300);
      expect((await bed.call('PATCH', `/webhooks/${w.name}`, { rate_limit: 20 })).status).toBe(200);
      expect((await lowering).status).toBe(200);
    } finally {
      slow.disarm();
      slow.stop();
    }
    expect(slow.hits.length).toBeGreaterThan(0);
    expect((await getWebhook(bed.ns.name, w.name))!.config.rate_limit).toBe(2);
    const from = Date.now() + 4000;
    const to = from + 10_000;
    await settle(to - Date.now() + 300);
    const count = at.filter((t) => t >= from && t < to).length;
    // At most the rate, one more at a window's edge (the code before: 21 in one second, 86 and
    // 98 in the 10 s).
    expect(worstSecond(at, from, to)).toBeLessThanOrEqual(3);
    expect(count).toBeLessThanOrEqual(21);
    await bed.call('DELETE', `/webhooks/${w.name}`);
  } finally {
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  }
});
