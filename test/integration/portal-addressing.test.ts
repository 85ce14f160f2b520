/**
 * Application-addressed events (docs/portal.md "Publishing to an application"): a publish may
 * name the application it is for (`application`); a webhook of an application receives only
 * messages addressed to it, never unaddressed ones, whatever its topic filter; a webhook of no
 * application receives every message its filter matches, as before. Publishing to an application
 * that does not exist is 404 APPLICATION_NOT_FOUND and stores nothing.
 */
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { unique } from '../fixtures/queues';
import { until, type Receiver } from '../fixtures/receiver';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { ok, portalSession } from '../fixtures/application-webhooks';
import { sqsClient } from '../../lambda/core/adapters/sqs';

jest.setTimeout(90_000);

const bed = webhookTestbed('addr');
const app = { a: unique('cust-a'), b: unique('cust-b') };
const topic = unique('orders');

/** Every delivery job queued so far has ended: the delivery queue holds nothing, visible, in flight or delayed. */
async function deliveriesSettled() {
  await until(async () => {
    const out = await sqsClient().send(new GetQueueAttributesCommand({
      QueueUrl: bed.local.queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }));
    return Object.values(out.Attributes ?? {}).every((n) => n === '0');
  }, 30_000, 'an empty delivery queue');
}

const messageIds = (r: Receiver) => r.requests.map((q) => JSON.parse(q.body.toString('utf8')).message_id as string).sort();

describe('a message addressed to an application', () => {
  let rx: { a: Receiver; b: Receiver; all: Receiver };
  const sent = { a: '', b: '', none: '' };

  beforeAll(async () => {
    rx = { a: await bed.receivers.start(), b: await bed.receivers.start(), all: await bed.receivers.start() };
    for (const uid of [app.a, app.b]) await ok(bed.call('POST', '/applications', { uid }));
    // A's customer, signed in to the portal, asks for everything of the namespace.
    const a = await ok((await portalSession(bed, app.a))('POST', '/webhooks', { name: unique('wh-a'), url: rx.a.url, topic_filter: '#', retry_count: 0 }));
    expect(a.application).toBe(app.a);
    await ok(bed.call('POST', '/webhooks', { name: unique('wh-b'), url: rx.b.url, topic_filter: topic, application: app.b, retry_count: 0 }));
    await ok(bed.call('POST', '/webhooks', { name: unique('wh-all'), url: rx.all.url, topic_filter: topic, retry_count: 0 }));
    sent.b = (await ok(bed.call('POST', `/topics/${topic}/messages`, { payload: '{"for":"b"}', application: app.b }))).message_id;
    sent.none = (await ok(bed.call('POST', `/topics/${topic}/messages`, { payload: '{"for":"nobody"}' }))).message_id;
    sent.a = (await ok(bed.call('POST', `/topics/${topic}/messages`, { payload: '{"for":"a"}', application: app.a }))).message_id;
    await rx.all.waitFor(3, 30_000);
    await rx.a.waitFor(1, 30_000);
    await rx.b.waitFor(1, 30_000);
    await deliveriesSettled();
  });

  it("reaches A's session webhook on # only when addressed to A: not B's message, not an unaddressed one", () => {
    expect(messageIds(rx.a)).toEqual([sent.a]);
    const body = JSON.parse(rx.a.requests[0].body.toString('utf8'));
    expect(body.properties).toEqual({ 'x-application': app.a });
  });

  it("reaches B's webhook only with B's message", () => expect(messageIds(rx.b)).toEqual([sent.b]));

  it('reaches a webhook of no application whatever it is addressed to', () => expect(messageIds(rx.all)).toEqual([sent.a, sent.b, sent.none].sort()));

  it('addresses each message of a batch on its own', async () => {
    const before = { a: rx.a.requests.length, b: rx.b.requests.length };
    const r = await ok(bed.call('POST', `/topics/${topic}/messages/batch`, { messages: [{ payload: '1', application: app.b }, { payload: '2' }, { payload: '3', application: app.a }] }));
    await rx.a.waitFor(before.a + 1, 30_000);
    await rx.b.waitFor(before.b + 1, 30_000);
    await rx.all.waitFor(6, 30_000);
    await deliveriesSettled();
    expect(messageIds({ ...rx.a, requests: rx.a.requests.slice(before.a) })).toEqual([r.message_ids[2]]);
    expect(messageIds({ ...rx.b, requests: rx.b.requests.slice(before.b) })).toEqual([r.message_ids[0]]);
  });
});

describe('publishing to an application', () => {
  it('answers 404 APPLICATION_NOT_FOUND for one that does not exist, and stores nothing', async () => {
    const q = unique('q');
    await ok(bed.call('POST', '/queues', { name: q, topic_filter: `${q}/#` }));
    const nobody = unique('nobody');
    const one = await bed.call('POST', `/topics/${q}/x/messages`, { payload: 'p', application: nobody });
    expect([one.status, one.body.error?.code]).toEqual([404, 'APPLICATION_NOT_FOUND']);
    const batch = await bed.call('POST', `/topics/${q}/x/messages/batch`, { messages: [{ payload: 'p', application: app.a }, { payload: 'p', application: nobody }] });
    expect([batch.status, batch.body.error?.code]).toEqual([404, 'APPLICATION_NOT_FOUND']);
    expect(batch.body.error?.details).toMatchObject({ field: 'messages.1.application' });
    expect((await ok(bed.call('GET', `/queues/${q}`), 200)).message_count).toBe(0);
  });

  it('refuses a malformed application (422), a wrong type (400), and a conflicting x-application property (422)', async () => {
    const at = `/topics/${topic}/messages`;
    const bad = await bed.call('POST', at, { payload: 'p', application: 'no spaces' });
    expect([bad.status, bad.body.error?.code]).toEqual([422, 'VALIDATION_ERROR']);
    expect((await bed.call('POST', at, { payload: 'p', application: 7 })).status).toBe(400);
    const both = await bed.call('POST', at, { payload: 'p', application: app.a, properties: { 'x-application': app.b } });
    expect([both.status, both.body.error?.code]).toEqual([422, 'VALIDATION_ERROR']);
  });
});
