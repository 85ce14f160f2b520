/**
 * A dead endpoint: while its webhook's circuit is open and another delivery holds the probe (as
 * the delivery batch read the webhook), a delivery parks behind the probe at once. With
 * `rate_limit`, without reserving a rate slot first (which sent it round the delivery queue for
 * the slot and only then parked it: 3 SQS receives instead of 2); with `max_in_flight`, without
 * taking a place and trying the probe (writes, the probe's a refused conditional one, for the
 * same answer). Probes keep their gaps (docs/webhooks.md "Endpoint health").
 */
import { createServer, type Server } from 'node:http';
import { countReceives } from '../fixtures/delivery-receives';
import { recordDynamoCalls } from '../fixtures/dynamo-calls';
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
    // Most deliveries parked (received once, then released or probed later: 2 at most). Of those
    // published, as a busy lane publishes fewer than 60 in the 30 s (a slowed CI run: 30 received).
    expect(counts.filter((n) => n >= 1).length).toBeGreaterThan(ids.length * 0.66);
    expect(Math.max(...counts)).toBeLessThanOrEqual(2);
  } finally {
    counter.stop();
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  }
});

it('max_in_flight 1 and an endpoint that hangs: deliveries behind the held probe neither try the probe nor take a place', async () => {
  const open: number[] = [];
  const srv: Server = createServer((req) => {
    // Never answers: each probe holds the circuit for its whole timeout.
    req.resume();
    open.push(Date.now());
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const counter = countReceives();
  const dynamo = recordDynamoCalls();
  try {
    const url = `http://127.0.0.1:${(srv.address() as { port: number }).port}/hook`;
    const { topic, stored: w } = await openCircuitWebhook(bed, url, -1000, { max_in_flight: 1, timeout: 3, failure_threshold: 10_000, disable_after: 3600 });
    const ids: string[] = [];
    const end = Date.now() + 15_000;
    while (Date.now() < end) {
      const r = await bed.call('POST', `/topics/${topic}/messages`, { payload: `m${ids.length}` });
      expect(r.status).toBe(201);
      ids.push(r.body.data.message_id);
      await new Promise((res) => setTimeout(res, 500));
    }
    await new Promise((r) => setTimeout(r, 2000));
    const ofWebhook = (c: { input: Record<string, any> }) => JSON.stringify(c.input.Key ?? {}).includes(w.id) || JSON.stringify(c.input.ExpressionAttributeValues ?? {}).includes(w.id);
    // Tries at the probe: conditional writes of probe_until that require it free.
    const probeTries = dynamo.calls.filter((c) => /^Update(Item)?Command$/.test(c.command) && String(c.input.ConditionExpression ?? '').includes('health.probe_until <= :now') && ofWebhook(c)).length;
    // Takes of an in-flight place: the read of the webhook's leases item.
    const placeTakes = dynamo.calls.filter((c) => /^Get(Item)?Command$/.test(c.command) && String(c.input.Key?.pk ?? '').includes(`#WHINFL#${w.id}`)).length;
    const counts = ids.map((id) => counter.receives.get(id) ?? 0);
    // Before, every arrival tried both (19 tries at the probe and 31 place reads for 28 deliveries
    // and 2 requests); now only a delivery that found the probe free tries (4 and 4).
    expect(probeTries).toBeLessThanOrEqual(2 * open.length + 4);
    expect(placeTakes).toBeLessThanOrEqual(2 * open.length + 4);
    // One request open at a time, one per hold (3 s timeout, then the gap).
    expect(open.length).toBeGreaterThanOrEqual(2);
    expect(Math.min(...open.slice(1).map((at, i) => at - open[i]))).toBeGreaterThanOrEqual(2900);
    expect(Math.max(...counts)).toBeLessThanOrEqual(2);
  } finally {
    dynamo.stop();
    counter.stop();
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  }
});
