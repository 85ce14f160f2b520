/**
 * The reads a rate-limited job makes before its POST do not move the POST off its slot
 * (docs/webhooks.md "Delivery limits"): a job that waits for its slot reads its delivery record
 * again (a copy of it may have ended meanwhile), and when that read answers late beside the
 * on-time reads of the next jobs, requests released 1/rate apart must not reach the endpoint
 * together. The bound: `rate_limit` + 1 requests in any second (one more at a window's edge).
 */
import { until, worstSecond } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { queueApi, unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { slowDynamoAnswers } from '../fixtures/dynamo-calls';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';

jest.setTimeout(120_000);

const bed = webhookTestbed('wrateslow');
const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));


/**
 * Delivers `n` messages to a new webhook at `rate_limit` while the single reads (GetItem) of its
 * delivery records answer `ms` late (the `i`th such read `ms(i)` late); its name, the slowed
 * reads, the arrival times in order and the most in one second, once every request has arrived
 * and 2 s more have passed.
 */
async function deliverWithSlowRecordReads(rate: number, n: number, ms: number | ((i: number) => number)) {
  const recv = await bed.receivers.start();
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, rate_limit: rate });
  const id = (await getWebhook(bed.ns.name, w.name))!.id;
  const slow = slowDynamoAnswers({
    when: (c) => /^Get(Item)?Command$/.test(c.command) && c.input.Key?.sk === '#DELIVERY' && String(c.input.Key?.pk).includes(`#WEBHOOK#${id}#DLV#`),
    ms,
  });
  slow.arm();
  try {
    await queueApi(bed.call).publishBatch(topic, Array.from({ length: n }, (_, j) => ({ payload: `m${j}` })));
    await until(async () => recv.requests.length >= n, 60_000, `the ${n} deliveries`);
    await settle(2000);
  } finally {
    slow.stop();
  }
  const times = recv.requests.map((r) => r.at).sort((a, b) => a - b);
  return { recv, name: w.name, hits: slow.hits.length, times, worst: worstSecond(times) };
}

it('at rate_limit 3, with two in five delivery-record reads answering 700 ms late, no second gets more than 4 requests', async () => {
  // The single reads (GetItem) of this webhook's delivery records: two late, three on time, and so
  // on. Slots 333 ms apart whose POSTs follow such reads arrived 5 in one second (two late beside
  // three on time), as the simulation saw under slow storage.
  const n = 30;
  const { recv, name, hits, times, worst } = await deliverWithSlowRecordReads(3, n, (i) => (i % 5 < 2 ? 700 : 0));
  console.log(`rate_limit 3, ${hits} record reads slowed: ${n} requests over ${((times[n - 1] - times[0]) / 1000).toFixed(1)} s, at most ${worst} in one second`);
  expect(hits).toBeGreaterThanOrEqual(5);
  expect(worst).toBeLessThanOrEqual(4);
  // Each once, and all of them (a job late for its slot takes another, it is not lost).
  expect(recv.requests).toHaveLength(n);
  expect((await bed.call('GET', `/webhooks/${name}/status`)).body.data).toMatchObject({ success_count: n, failure_count: 0 });
});

// Reads slower than the lead a container has learnt (it starts at 100 ms) make the first jobs miss
// their slots: each takes the next free slot and goes at it with no further read, waits for it on
// the queue and comes back the (now longer) lead early. Before, a job that missed its slot took one
// at the end of the backlog, came back as early as before, missed it again: none was delivered.
it('at rate_limit 2, with every delivery-record read answering 1.5 s late, jobs that miss their slot take the next: all delivered once, none faster than the limit', async () => {
  const n = 12;
  const { recv, name, hits, times, worst } = await deliverWithSlowRecordReads(2, n, 1500);
  console.log(`rate_limit 2, ${hits} record reads 1.5 s late: ${n} requests over ${((times[n - 1] - times[0]) / 1000).toFixed(1)} s, at most ${worst} in one second`);
  expect(hits).toBeGreaterThanOrEqual(n / 2);
  expect(worst).toBeLessThanOrEqual(3);
  expect(recv.requests).toHaveLength(n);
  expect((await bed.call('GET', `/webhooks/${name}/status`)).body.data).toMatchObject({ success_count: n, failure_count: 0 });
});
