/**
 * Parked deliveries whose release at the circuit's close failed (lambda/webhooks/parking.ts): the
 * probe ticket releases them, also when a new run of failures began before the ticket looked
 * again (the replay webhook of the simulation's `replay-never-delivered`: its own first
 * deliveries fail on purpose and open a new run at once). The circuit and the parked deliveries
 * are set up with the storage functions; the ticket, the probe and the release run in the local
 * delivery against a real receiver, with SQS faults placed by the injector (./injector.ts).
 */
import { openCircuitWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { sqsClient } from '../../lambda/core/adapters/sqs';
import { dynamoClient } from '../../lambda/core/storage/client';
import { openCircuit, takeProbe } from '../../lambda/webhooks/storage/webhook-health';
import { parkedJobs } from '../../lambda/webhooks/storage/webhook-parked';
import { circuitOpen } from '../../lambda/webhooks/rules/endpoint-health';
import { park } from '../../lambda/webhooks/parking';
import type { PublishedMessage } from '../../lambda/core/rules/message';
import { FaultInjector } from './injector';

jest.setTimeout(90_000);

// A delivery record that throws comes back after 5 s (the stack's visibility is 6 minutes).
const bed = webhookTestbed('whpkrel', { visibilitySeconds: 5 });
const injector = new FaultInjector(34);
beforeAll(() => {
  injector.attach(sqsClient(), 'sqs');
  injector.attach(dynamoClient(), 'dynamodb');
});
afterEach(() => injector.clearOneShots());

const message = (id: string, at: number): PublishedMessage => ({ message_id: id, topic: 'never/published', payload: `p-${id}`, content_type: 'text/plain', properties: {}, published_at: at, size: 4 });
const idsOf = (bodies: Buffer[]) => bodies.map((b) => JSON.parse(b.toString('utf8')).message_id as string).sort();

/** A webhook whose circuit is open with its probe free now. */
async function openWebhook(url: string) {
  const opened = await openCircuitWebhook(bed, url);
  expect(circuitOpen(opened.open.health)).toBe(true);
  return opened;
}

type Opened = Awaited<ReturnType<typeof openWebhook>>;

/** Parks a delivery of each of `ids` (published now) on the open webhook, its ticket due in `ticketInMs`. */
async function parkAll({ w, stored, open }: Opened, ids: string[], ticketInMs: number) {
  const now = Date.now();
  for (const id of ids) await park({ namespace: bed.ns.name, webhook_id: stored.id, webhook_name: w.name, message: message(id, now) }, open, Date.now() + ticketInMs);
}

/** Waits long enough for a second copy of any delivery to arrive, then checks each came once. */
async function expectEachOnce(recv: { requests: { body: Buffer }[] }, ids: string[]) {
  await new Promise((r) => setTimeout(r, 3000));
  expect(idsOf(recv.requests.map((r) => r.body))).toEqual([...ids].sort());
}

it('releases what the close left parked when a new run began before the ticket looked again', async () => {
  const recv = await bed.receivers.start();
  const opened = await openWebhook(recv.url);
  const { stored } = opened;
  const ids = ['A', 'B', 'C'].map((x) => unique(x));
  // The release at the close (the probe's success) fails in SQS after every retry; while it is
  // tried, a failure of another delivery opens a new run (no ticket out for it).
  let reopened: Promise<boolean> | undefined;
  injector.failNext({
    service: 'sqs',
    command: 'SendMessageBatchCommand',
    kind: { code: 'InternalError', status: 500 },
    timing: 'before',
    attempts: Infinity,
    delayMs: 1000,
    matches: (input) => {
      if (!JSON.stringify(input).includes(ids[1])) return false;
      reopened ??= openCircuit(stored, Date.now(), 'HTTP 500');
      return true;
    },
  });
  // Parked with the ticket due in 1 s: it probes the oldest, which succeeds and closes the circuit.
  await parkAll(opened, ids, 1000);
  await recv.waitFor(3, 30_000);
  expect(injector.unused).toBe(0);
  expect(await reopened).toBe(true);
  await expectEachOnce(recv, [...ids]);
  expect((await parkedJobs(bed.ns.name, stored.id, 10)).jobs).toHaveLength(0);
});

it('releases what a failed release at the close left parked within seconds, not at the ticket\'s next probe', async () => {
  const recv = await bed.receivers.start();
  const opened = await openWebhook(recv.url);
  const { stored, topic } = opened;
  const ids = ['D', 'E', 'F'].map((x) => unique(x));
  // The release at the close fails in SQS after every retry (and only that one).
  injector.failNext({ service: 'sqs', command: 'SendMessageBatchCommand', kind: { code: 'InternalError', status: 500 }, timing: 'before', attempts: Infinity, matches: (input) => JSON.stringify(input).includes(ids[0]) });
  // Parked with their ticket due back in 5 minutes (a long probe gap).
  await parkAll(opened, ids, 300_000);
  // A new delivery takes the free probe, succeeds and closes the circuit.
  const published = await bed.call('POST', `/topics/${topic}/messages`, { payload: 'fresh' });
  expect(published.status).toBe(201);
  await recv.waitFor(4, 40_000);
  expect(injector.unused).toBe(0);
  await expectEachOnce(recv, [...ids, published.body.data.message_id]);
  expect((await parkedJobs(bed.ns.name, stored.id, 10)).jobs).toHaveLength(0);
});

it('carries on when the ticket for the next probe was noted but its send failed', async () => {
  // The probe (the oldest parked delivery) fails; the rest succeed.
  const recv = await bed.receivers.start({ failFirst: 1 });
  const opened = await openWebhook(recv.url);
  const { stored } = opened;
  const ids = ['G', 'H', 'I'].map((x) => unique(x));
  // The first ticket (sent by the park) goes; the next one (after the failed probe) fails in SQS
  // after every retry, once it was noted on the webhook's health.
  let tickets = 0;
  injector.failNext({
    service: 'sqs',
    command: 'SendMessageBatchCommand',
    kind: { code: 'InternalError', status: 500 },
    timing: 'before',
    attempts: Infinity,
    matches: (input) => JSON.stringify(input).includes('probe_ticket') && JSON.stringify(input).includes(stored.id) && ++tickets === 2,
  });
  await parkAll(opened, ids, 1000);
  await recv.waitFor(3, 40_000);
  expect(injector.unused).toBe(0);
  await expectEachOnce(recv, [...ids]);
  expect((await parkedJobs(bed.ns.name, stored.id, 10)).jobs).toHaveLength(0);
});

it('hands on every parked delivery a release took when taking another one failed', async () => {
  const recv = await bed.receivers.start();
  const opened = await openWebhook(recv.url);
  const { stored, topic } = opened;
  const ids = ['J', 'K', 'L'].map((x) => unique(x));
  // Taking one parked delivery off (its conditional delete, a DeleteItem or a one-item
  // transaction, whichever the release uses) fails after every retry, once.
  for (const command of ['DeleteItemCommand', 'TransactWriteItemsCommand']) {
    injector.failNext({ service: 'dynamodb', command, kind: { code: 'InternalServerError', status: 500 }, timing: 'before', attempts: Infinity, matches: (input) => JSON.stringify(input).includes(ids[1]) && JSON.stringify(input).includes('WHPARK') });
  }
  await parkAll(opened, ids, 300_000);
  const published = await bed.call('POST', `/topics/${topic}/messages`, { payload: 'fresh' });
  expect(published.status).toBe(201);
  await recv.waitFor(4, 40_000);
  expect(injector.unused).toBe(1);
  await expectEachOnce(recv, [...ids, published.body.data.message_id]);
  expect((await parkedJobs(bed.ns.name, stored.id, 10)).jobs).toHaveLength(0);
});

it('hands on a parked delivery whose take-off was applied but its answer lost', async () => {
  const recv = await bed.receivers.start();
  const opened = await openWebhook(recv.url);
  const { topic } = opened;
  const ids = ['M', 'N'].map((x) => unique(x));
  // DynamoDB deletes the parked item, the answer is lost and the SDK sends the delete again (as a
  // DeleteItem or a one-item transaction, whichever the release uses).
  const lost = (command: string) => injector.failNext({ service: 'dynamodb', command, kind: { code: 'InternalServerError', status: 500 }, timing: 'after', attempts: 1, matches: (input) => JSON.stringify(input).includes(ids[0]) && JSON.stringify(input).includes('WHPARK') });
  lost('DeleteItemCommand');
  lost('TransactWriteItemsCommand');
  await parkAll(opened, ids, 300_000);
  const published = await bed.call('POST', `/topics/${topic}/messages`, { payload: 'fresh' });
  expect(published.status).toBe(201);
  await recv.waitFor(3, 40_000);
  expect(injector.unused).toBe(1);
  await expectEachOnce(recv, [...ids, published.body.data.message_id]);
});

it('hands on a parked delivery whose take-off was applied and every answer lost', async () => {
  const recv = await bed.receivers.start();
  const opened = await openWebhook(recv.url);
  const { topic } = opened;
  const ids = ['P', 'Q'].map((x) => unique(x));
  // DynamoDB deletes the parked item and every answer to the call is lost: the take throws.
  injector.failNext({ service: 'dynamodb', command: 'TransactWriteItemsCommand', kind: { code: 'InternalServerError', status: 500 }, timing: 'after', attempts: Infinity, matches: (input) => JSON.stringify(input).includes(ids[0]) && JSON.stringify(input).includes('WHPARK') });
  await parkAll(opened, ids, 300_000);
  const published = await bed.call('POST', `/topics/${topic}/messages`, { payload: 'fresh' });
  expect(published.status).toBe(201);
  await recv.waitFor(3, 40_000);
  expect(injector.unused).toBe(0);
  await expectEachOnce(recv, [...ids, published.body.data.message_id]);
});

it('sends the probe ticket within seconds when the one noted was neither sent nor given back', async () => {
  const recv = await bed.receivers.start();
  const opened = await openWebhook(recv.url);
  const { stored, topic } = opened;
  // Another attempt holds the probe for 25 s: deliveries meanwhile are parked.
  expect(await takeProbe(stored, Date.now(), Date.now() + 25_000)).toBe(true);
  // The first park's ticket fails in SQS after every retry, and giving its note back fails in
  // DynamoDB after every retry: the note stays, with no ticket on its way.
  let tickets = 0;
  injector.failNext({ service: 'sqs', command: 'SendMessageBatchCommand', kind: { code: 'InternalError', status: 500 }, timing: 'before', attempts: Infinity, matches: (input) => JSON.stringify(input).includes('probe_ticket') && JSON.stringify(input).includes(stored.id) && ++tickets === 1 });
  injector.failNext({ service: 'dynamodb', command: 'UpdateItemCommand', kind: { code: 'InternalServerError', status: 500 }, timing: 'before', attempts: Infinity, matches: (input) => JSON.stringify(input).includes('REMOVE health.ticket_at') });
  const first = await bed.call('POST', `/topics/${topic}/messages`, { payload: 'first' });
  expect(first.status).toBe(201);
  await new Promise((r) => setTimeout(r, 18_000));
  expect(injector.unused).toBe(0);
  // A delivery parked once the unsent note lapsed sends the ticket: the probe then delivers it,
  // and its success releases the first (parked again by its redelivery).
  const second = await bed.call('POST', `/topics/${topic}/messages`, { payload: 'second' });
  expect(second.status).toBe(201);
  await recv.waitFor(2, 30_000);
  await expectEachOnce(recv, [first.body.data.message_id, second.body.data.message_id]);
  expect((await parkedJobs(bed.ns.name, stored.id, 10)).jobs).toHaveLength(0);
});
