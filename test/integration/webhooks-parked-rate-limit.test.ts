/**
 * A webhook with `rate_limit` whose endpoint is dead: while its circuit is open and another
 * delivery holds the probe, a delivery parks behind the probe at once, without reserving a rate
 * slot first (which sent it round the delivery queue for the slot and only then parked it: 3 SQS
 * receives instead of 2). Probes keep their gaps (docs/webhooks.md "Endpoint health").
 */
import { createServer, type Server } from 'node:http';
import { countReceives } from '../fixtures/delivery-receives';
import { openCircuitWebhook } from '../fixtures/webhooks';
import { webhookTestbed } from '../fixtures/webhook-testbed';

jest.setTimeout(120_000);

const bed = webhookTestbed('wparkrate');

it('rate_limit 1 and a dead endpoint at 2 messages/s: each delivery behind the open circuit is received at most twice', async () => {
  const requests: number[] = [];
  const srv: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests.push(Date.now());
      res.writeHead(500).end();
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const counter = countReceives();
  try {
    const url = `http://127.0.0.1:${(srv.address() as { port: number }).port}/hook`;
    const { topic } = await openCircuitWebhook(bed, url, -1000, { rate_limit: 1, timeout: 5, failure_threshold: 10_000, disable_after: 3600 });
    const ids: string[] = [];
    const end = Date.now() + 30_000;
    while (Date.now() < end) {
      const r = await bed.call('POST', `/topics/${topic}/messages`, { payload: `m${ids.length}` });
      expect(r.status).toBe(201);
      ids.push(r.body.data.message_id);
      await new Promise((res) => setTimeout(res, 500));
    }
    await new Promise((r) => setTimeout(r, 3000));
    const counts = ids.map((id) => counter.receives.get(id) ?? 0);
    // Probes went, one per gap at most (the gap doubles from 1 s after each failed probe).
    expect(requests.length).toBeGreaterThanOrEqual(2);
    expect(Math.min(...requests.slice(1).map((at, i) => at - requests[i]))).toBeGreaterThanOrEqual(900);
    // Most deliveries parked (received once, then released or probed later: 2 at most).
    expect(counts.filter((n) => n >= 1).length).toBeGreaterThan(40);
    expect(Math.max(...counts)).toBeLessThanOrEqual(2);
  } finally {
    counter.stop();
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  }
});
