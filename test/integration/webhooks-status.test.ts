/**
 * What a webhook's status says (docs/webhooks.md): `last_error` describes a failure only until a
 * later delivery succeeds. (`status` reading `disabled` while `enabled` is false was reverted in
 * cfee165: a listed conformance case asserts `active` for a webhook created disabled.)
 */
import { randomUUID } from 'node:crypto';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { receiverPool, until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { startLocalWebhooks, type LocalWebhooks } from '../../local/webhooks';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, queryAll, tableName } from '../../lambda/core/storage/client';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { FOLD_IDLE_MS } from '../../lambda/webhooks/storage/webhook-counters';

jest.setTimeout(30_000);

let server: TestServer;
let local: LocalWebhooks;
let call: ReturnType<typeof client>;
let ns: string;
const receivers = receiverPool();

beforeAll(async () => {
  server = await startTestServer();
  local = await startLocalWebhooks({ queueName: `deliveries-${randomUUID()}` });
  const n = await createTestNamespace('wst');
  ns = n.name;
  call = client(server.baseUrl, n.key);
});
afterAll(async () => {
  await receivers.closeAll();
  await local.stop();
  await server.close();
});

const status = async (name: string) => (await call('GET', `/webhooks/${name}/status`)).body.data;

describe('webhook status', () => {
  it('reads disabled while enabled is false, in the status, the get and the list', async () => {
    const w = await createWebhook(call, { url: 'https://hooks.example.com/in', topic_filter: unique('t'), enabled: false });
    const listed = async () => (await call('GET', '/webhooks?limit=100')).body.data.webhooks.find((x: { name: string }) => x.name === w.name).status;
    expect((await status(w.name)).status).toBe('disabled');
    expect((await call('GET', `/webhooks/${w.name}`)).body.data.status).toBe('disabled');
    expect(await listed()).toBe('disabled');
    expect((await call('PATCH', `/webhooks/${w.name}`, { enabled: true })).body.data.status).toBe('active');
    expect((await status(w.name)).status).toBe('active');
    expect(await listed()).toBe('active');
  });

  it('clears last_error once a later delivery succeeds', async () => {
    const recv = await receivers.start({ failFirst: 1 });
    const topic = unique('t');
    const w = await createWebhook(call, { url: recv.url, topic_filter: topic, retry_count: 0 });
    expect((await call('POST', `/topics/${topic}/messages`, { payload: 'fails' })).status).toBe(201);
    await until(async () => (await status(w.name)).failure_count === 1, 10_000, 'the failure counted');
    expect((await status(w.name)).last_error).toBe('HTTP 500');
    expect((await call('POST', `/topics/${topic}/messages`, { payload: 'succeeds' })).status).toBe(201);
    const s = await until(async () => { const x = await status(w.name); return x.success_count === 1 && x; }, 10_000, 'the success counted');
    expect(s).toMatchObject({ failure_count: 1, last_error: null, next_retry: null });
  });

  // Each writer (docs/design/0018-webhook-delivery-writes.md: a container's flush chain) adds to an
  // item of its own; a read sums them with the total and the shard items written before writers,
  // and folds writers idle for an hour into the total, so reads do not grow with every container
  // that ever delivered.
  it('counts writers, the total and the old shards; folds idle writers into the total without changing a count', async () => {
    const recv = await receivers.start();
    const topic = unique('t');
    const w = await createWebhook(call, { url: recv.url, topic_filter: topic, retry_count: 0 });
    for (const payload of ['a', 'b']) expect((await call('POST', `/topics/${topic}/messages`, { payload })).status).toBe(201);
    await until(async () => (await status(w.name)).success_count === 2, 10_000, 'both deliveries counted');
    const id = (await getWebhook(ns, w.name))!.id;
    const pk = `NS#${ns}#WEBHOOK#${id}`;
    const long = Date.now() - FOLD_IDLE_MS - 60_000;
    const put = (Item: Record<string, unknown>) => ddb().send(new PutCommand({ TableName: tableName('meta'), Item }));
    // A container gone an hour ago (its item in the total's partition, where writers were before
    // writer partitions), a total from before writers (no fold yet), and a shard from before writers.
    await put({ pk, sk: '#STATUS#W#gone#0', seq: 4, written_at: long, success_count: 5, failure_count: 1, last_delivery: long, last_error: 'HTTP 502', last_error_at: long });
    await put({ pk, sk: '#STATUS', success_count: 10, last_delivery: long - 5 });
    await put({ pk: `${pk}#STATUS#3`, sk: '#STATUS', success_count: 7 });
    const partition = (of = pk) => queryAll<Record<string, unknown>>({ TableName: tableName('meta'), KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': of }, ConsistentRead: true });
    const first = await status(w.name);
    expect(first).toMatchObject({ success_count: 24, failure_count: 1, last_error: null });
    // The read folded the idle writer: its item is gone, the total holds its counts; the active
    // writers stay, in the writer partitions (keys.ts `webhookCounterPartitions`).
    const items = await partition();
    expect(items.map((i) => i.sk)).not.toContain('#STATUS#W#gone#0');
    expect(items.find((i) => i.sk === '#STATUS')).toMatchObject({ success_count: 15, failure_count: 1, last_error: 'HTTP 502', fold_version: 1 });
    const writers = (await Promise.all([0, 1].map((i) => partition(`${pk}#COUNTS#${i}`)))).flat();
    expect(writers.filter((i) => String(i.sk).startsWith('#STATUS#W#')).reduce((n, i) => n + Number(i.success_count ?? 0), 0)).toBe(2);
    expect(await status(w.name)).toEqual(first);
    expect((await call('POST', `/topics/${topic}/messages`, { payload: 'c' })).status).toBe(201);
    await until(async () => (await status(w.name)).success_count === 25, 10_000, 'the third delivery counted');
  });
});
