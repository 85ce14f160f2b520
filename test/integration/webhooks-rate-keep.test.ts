/**
 * A change of a webhook that keeps its `rate_limit` (a new timeout, a header) keeps the slots its
 * waiting deliveries reserved (docs/webhooks.md "Delivery limits"): the backlog goes on at its
 * rate. Before, every waiting job dropped its slot (reserved under the webhook's previous version)
 * and reserved again after the whole backlog's slots, which went unused: no request for as long
 * as the backlog had left.
 */
import { until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { queueApi, unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';

jest.setTimeout(120_000);

const bed = webhookTestbed('wratekeep');

it('goes on at its rate after a PATCH that keeps rate_limit: no gap of the backlog\'s length', async () => {
  const recv = await bed.receivers.start();
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, rate_limit: 5 });
  const q = queueApi(bed.call);
  // 12 s of slots at 5 a second: most jobs reserve a slot seconds ahead and wait for it.
  await q.publishBatch(topic, Array.from({ length: 60 }, (_, j) => ({ payload: `a${j}` })));
  await until(async () => recv.requests.length >= 10, 30_000, 'the backlog flowing at 5 a second');
  const patched = await bed.call('PATCH', `/webhooks/${w.name}`, { timeout: 20 });
  expect([patched.status, patched.body.data.rate_limit]).toEqual([200, 5]);
  const changedAt = Date.now();
  await until(async () => recv.requests.length >= 60, 60_000, 'the whole backlog delivered');
  const times = recv.requests.map((r) => r.at).sort((a, b) => a - b);
  const after = times.filter((t) => t >= changedAt);
  const gaps = after.slice(1).map((t, i) => t - after[i]);
  const longest = Math.max(...gaps, after[0] - changedAt);
  console.log(`PATCH keeping rate_limit 5 with ${after.length} of 60 left: the longest gap between requests after it ${longest} ms, the rest took ${after[after.length - 1] - changedAt} ms`);
  // At 5 a second a request every 200 ms; the jobs within a second of their slot at the change go
  // back through the whole path once (they read the webhook again): about a second's gap at most.
  expect(longest).toBeLessThan(2_500);
  expect(new Set(recv.requests.map((r) => r.body.toString('utf8'))).size).toBe(60);
});
