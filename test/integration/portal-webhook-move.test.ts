/**
 * A webhook the platform moves from one application to another (`PATCH /webhooks/{name}` with
 * `application`), seen by a portal session (docs/portal.md "A webhook moved to another
 * application"): the session of the application it was given to never reads nor replays another
 * application's deliveries, and a session's rotation, log and replay judge ownership on the read
 * their action uses, so a move between two reads is never missed.
 */
import { createHmac } from 'node:crypto';
import { unique } from '../fixtures/queues';
import { until } from '../fixtures/receiver';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { ok, portalSession } from '../fixtures/application-webhooks';
import { dynamoClient } from '../../lambda/core/storage/client';

jest.setTimeout(120_000);

const bed = webhookTestbed('move');

/**
 * Runs `between` once, right after the next GetItem of a key that names `name` has answered: where
 * two Lambda invocations at once (the session's request and the platform's PATCH) may interleave.
 */
function afterNextReadOf(name: string, between: () => Promise<unknown>) {
  let armed = true;
  dynamoClient().middlewareStack.add(
    (next: any, context: any) => async (args: any) => {
      const out = await next(args);
      if (armed && context.commandName === 'GetItemCommand' && JSON.stringify(args.input.Key).includes(name)) {
        armed = false;
        await between();
      }
      return out;
    },
    { step: 'initialize', name: 'afterNextReadOf', override: true },
  );
}

it("a webhook given to application A does not let A's session read or replay B's deliveries", async () => {
  const failing = await bed.receivers.start({ status: 500 });
  const mine = await bed.receivers.start();
  const a = unique('cust-a');
  const b = unique('cust-b');
  for (const uid of [a, b]) await ok(bed.call('POST', '/applications', { uid }));
  const topic = unique('orders');
  // The platform's own endpoint, on no application: it receives every customer's messages.
  const name = (await ok(bed.call('POST', '/webhooks', { name: unique('wh'), url: failing.url, topic_filter: topic, retry_count: 0 }))).name;
  const idOfB = (await ok(bed.call('POST', `/topics/${topic}/messages`, { payload: '{"customer":"B","card":"4111"}', application: b }))).message_id;
  await until(async () => ((await bed.call('GET', `/webhooks/${name}/deliveries`)).body.data.deliveries.length > 0 ? true : undefined), 20_000, 'the failed delivery');

  // The platform hands the endpoint to customer A, who signs in.
  await ok(bed.call('PATCH', `/webhooks/${name}`, { application: a }), 200);
  const session = await portalSession(bed, a);
  const seen = (await ok(session('GET', `/webhooks/${name}/deliveries`), 200)).deliveries.map((d: { message_id: string }) => d.message_id);
  const seenById = (await ok(session('GET', `/webhooks/${name}/deliveries?message_id=${idOfB}`), 200)).deliveries.length;
  await ok(session('PATCH', `/webhooks/${name}`, { url: mine.url }), 200);
  const bulk = await session('POST', `/webhooks/${name}/replay`, { since: new Date(Date.now() - 3_600_000).toISOString() });
  const replay = await session('POST', `/webhooks/${name}/deliveries/${idOfB}/replay`);
  await new Promise((r) => setTimeout(r, 5000));
  const leaked = mine.requests.map((r) => r.body.toString('utf8')).filter((body) => body.includes('4111'));
  // The platform's key still sees the whole log of its endpoint.
  const platformSees = (await ok(bed.call('GET', `/webhooks/${name}/deliveries`), 200)).deliveries.filter((d: { message_id: string }) => d.message_id === idOfB).length;
  // A's own deliveries are in A's log.
  const idOfA = (await ok(bed.call('POST', `/topics/${topic}/messages`, { payload: '{"for":"A"}', application: a }))).message_id;
  const ownSeen = await until(async () => ((await session('GET', `/webhooks/${name}/deliveries`)).body.data.deliveries.some((d: { message_id: string }) => d.message_id === idOfA) ? true : undefined), 20_000, "A's delivery in A's log");

  expect({ ids_of_b_seen: seen.filter((id: string) => id === idOfB).length, seen_by_id: seenById, replay: replay.status, bulk_queued: bulk.body.data?.queued, payloads_of_b_received: leaked.length, platform_sees: platformSees, own_seen: ownSeen })
    .toEqual({ ids_of_b_seen: 0, seen_by_id: 0, replay: 404, bulk_queued: 0, payloads_of_b_received: 0, platform_sees: 1, own_seen: true });
});

it('a retry pending when the platform moves its webhook to application A goes out only if its message is addressed to A', async () => {
  const failing = await bed.receivers.start({ status: 500 });
  const mine = await bed.receivers.start();
  const [a, b] = [unique('cust-a'), unique('cust-b')];
  for (const uid of [a, b]) await ok(bed.call('POST', '/applications', { uid }));
  const topic = unique('orders');
  const name = (await ok(bed.call('POST', '/webhooks', { name: unique('wh'), url: failing.url, topic_filter: topic, retry_count: 1, retry_delay: 6 }))).name;
  for (const [payload, application] of [['{"for":"to-b"}', b], ['{"for":"to-a"}', a], ['{"for":"to-none"}', undefined]]) {
    await ok(bed.call('POST', `/topics/${topic}/messages`, { payload, ...(application ? { application } : {}) }));
  }
  await failing.waitFor(3, 20_000); // every first attempt failed: each has its retry pending
  await ok(bed.call('PATCH', `/webhooks/${name}`, { application: a, url: mine.url }), 200);

  // The retry of A's message reaches the moved webhook (the retries did run); B's and the
  // unaddressed one are not sent to it.
  await mine.waitFor(1, 30_000);
  await new Promise((r) => setTimeout(r, 4000));
  const received = mine.requests.map((r) => ['to-a', 'to-b', 'to-none'].find((t) => r.body.toString('utf8').includes(t)));
  expect(received).toEqual(['to-a']);
});

it("a session's rotation never rotates, nor answers the secret of, a webhook moved to another application meanwhile", async () => {
  const receiver = await bed.receivers.start();
  const [a, b] = [unique('cust-a'), unique('cust-b')];
  for (const uid of [a, b]) expect((await bed.call('POST', '/applications', { uid })).status).toBe(201);
  const topic = unique('orders');
  const name = unique('wh');
  expect((await bed.call('POST', '/webhooks', { name, url: receiver.url, topic_filter: topic, application: a })).status).toBe(201);
  const session = await portalSession(bed, a);

  let moved = 0;
  afterNextReadOf(name, async () => (moved = (await bed.call('PATCH', `/webhooks/${name}`, { application: b })).status));
  const rotated = await session('POST', `/webhooks/${name}/secret/rotate`, {});
  const owner = (await bed.call('GET', `/webhooks/${name}`)).body.data.application;

  // B's next delivery, signed as Standard Webhooks sign: base64 HMAC-SHA256 of `id.timestamp.body`.
  expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: '{"for":"B"}', application: b })).status).toBe(201);
  const [req] = await receiver.waitFor(1, 20_000);
  const secretA = typeof rotated.body.data?.secret === 'string' ? rotated.body.data.secret : 'whsec_';
  const expected = createHmac('sha256', Buffer.from(secretA.replace(/^whsec_/, ''), 'base64')).update(`${req.headers['webhook-id']}.${req.headers['webhook-timestamp']}.${req.body.toString('utf8')}`).digest('base64');
  const signedWithAsSecret = String(req.headers['webhook-signature']).split(' ').includes(`v1,${expected}`);

  expect({ moved, owner, rotate: rotated.status, signed_with_the_secret_a_got: signedWithAsSecret }).toEqual({ moved: 200, owner: b, rotate: 404, signed_with_the_secret_a_got: false });
});

it("a session's replay meeting a move to application B sends A's message nowhere: the delivery checks the webhook as it is then", async () => {
  const failing = await bed.receivers.start({ status: 500 });
  const ofB = await bed.receivers.start();
  const [a, b] = [unique('cust-a'), unique('cust-b')];
  for (const uid of [a, b]) await ok(bed.call('POST', '/applications', { uid }));
  const topic = unique('orders');
  const name = unique('wh');
  await ok(bed.call('POST', '/webhooks', { name, url: failing.url, topic_filter: topic, retry_count: 0, application: a }));
  const id = (await ok(bed.call('POST', `/topics/${topic}/messages`, { payload: '{"for":"only-a"}', application: a }))).message_id;
  await until(async () => ((await bed.call('GET', `/webhooks/${name}/deliveries`)).body.data.deliveries.length > 0 ? true : undefined), 20_000, 'the failed delivery');
  const session = await portalSession(bed, a);

  // The platform gives the webhook to B, with B's URL, right after the replay's read of it.
  let moved = 0;
  afterNextReadOf(name, async () => (moved = (await bed.call('PATCH', `/webhooks/${name}`, { application: b, url: ofB.url })).status));
  await session('POST', `/webhooks/${name}/deliveries/${id}/replay`);
  await new Promise((r) => setTimeout(r, 5000));

  expect({ moved, a_payloads_at_b: ofB.requests.filter((r) => r.body.toString('utf8').includes('only-a')).length }).toEqual({ moved: 200, a_payloads_at_b: 0 });
});
