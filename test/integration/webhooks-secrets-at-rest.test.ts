/**
 * Webhook signing secrets (docs/security.md), previous secrets in their grace period, header values
 * and mTLS client keys are encrypted at the application level (envelope encryption, KMS in AWS, a
 * local key here), so a raw read of the meta table, which any function that may read it could
 * make, shows none of them. The API and deliveries still use them; items written in plaintext
 * before encryption are read as they are and sealed on their next write.
 */
import { Webhook } from 'standardwebhooks';
import { DynamoDBClient, QueryCommand, PutItemCommand, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall, marshall } from '@aws-sdk/util-dynamodb';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { type ReceivedRequest } from '../fixtures/receiver';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { TABLES } from '../../lambda/core/storage/tables';

jest.setTimeout(60_000);

const bed = webhookTestbed('whe');
const raw = new DynamoDBClient({ endpoint: process.env.MSG_DYNAMODB_ENDPOINT, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
afterAll(() => raw.destroy());

const CLIENT_KEY = '-----BEGIN PRIVATE KEY-----\nAT-REST-KEY-MATERIAL\n-----END PRIVATE KEY-----\n';
const CLIENT_CERT = '-----BEGIN CERTIFICATE-----\nPUBLIC-CERT\n-----END CERTIFICATE-----\n';
const TOKEN = 'Bearer at-rest-token-5d1e';
const SECRET = `whsec_${Buffer.from('at-rest-signing-secret-0123456789').toString('base64')}`;

/** Every item of the test namespace in the meta table, as DynamoDB holds it. */
async function rawNamespaceItems(): Promise<string> {
  const out = await raw.send(new QueryCommand({ TableName: TABLES.meta.localName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': { S: `NS#${bed.ns.name}` } } }));
  expect(out.Items?.length).toBeGreaterThan(0);
  return JSON.stringify(out.Items);
}

function verifies(secret: string, r: ReceivedRequest): boolean {
  const headers = { 'webhook-id': String(r.headers['webhook-id']), 'webhook-timestamp': String(r.headers['webhook-timestamp']), 'webhook-signature': String(r.headers['webhook-signature']) };
  try {
    new Webhook(secret).verify(r.body.toString('utf8'), headers);
    return true;
  } catch {
    return false;
  }
}

describe('secrets at rest', () => {
  it('are not in the table, yet the API shows what it showed and deliveries sign with them', async () => {
    const recv = await bed.receivers.start();
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, secret: SECRET, headers: { Authorization: TOKEN }, tls: { client_cert: CLIENT_CERT, client_key: CLIENT_KEY } });
    const rotated = await bed.call('POST', `/webhooks/${w.name}/secret/rotate`);
    expect(rotated.status).toBe(200);
    const next = rotated.body.data.secret as string;

    const table = await rawNamespaceItems();
    for (const secret of [SECRET, next, TOKEN, 'AT-REST-KEY-MATERIAL', SECRET.slice(6), next.slice(6)]) expect({ secret, stored: table.includes(secret) }).toEqual({ secret, stored: false });
    expect(table).toContain('enc1.');
    expect(table).toContain('PUBLIC-CERT'); // certificates are public: not encrypted

    expect((await bed.call('GET', `/webhooks/${w.name}`)).body.data.headers).toEqual({ Authorization: TOKEN });
    expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'x' })).status).toBe(201);
    const [req] = await recv.waitFor(1);
    expect(req.headers.authorization).toBe(TOKEN);
    expect(verifies(next, req) && verifies(SECRET, req)).toBe(true); // the new secret and the previous one in its grace period
  });

  it('reads an item written in plaintext before encryption, and seals it on its next write', async () => {
    const recv = await bed.receivers.start();
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, headers: { Authorization: TOKEN } });
    const key = { pk: { S: `NS#${bed.ns.name}` }, sk: { S: `WEBHOOK#${w.name}` } };
    const stored = await raw.send(new GetItemCommand({ TableName: TABLES.meta.localName, Key: key }));
    expect(stored.Item).toBeDefined();
    const legacy = unmarshall(stored.Item!);
    delete legacy.sealing; // items from before encryption have no marker
    legacy.secret = SECRET;
    legacy.config.headers = { Authorization: TOKEN };
    await raw.send(new PutItemCommand({ TableName: TABLES.meta.localName, Item: marshall(legacy) }));

    expect((await bed.call('GET', `/webhooks/${w.name}`)).body.data.headers).toEqual({ Authorization: TOKEN });
    expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'x' })).status).toBe(201);
    const [req] = await recv.waitFor(1);
    expect(verifies(SECRET, req)).toBe(true);

    expect((await bed.call('PATCH', `/webhooks/${w.name}`, { retry_delay: 2 })).status).toBe(200);
    const migrated = JSON.stringify((await raw.send(new GetItemCommand({ TableName: TABLES.meta.localName, Key: key }))).Item);
    expect(migrated).not.toContain(SECRET);
    expect(migrated).not.toContain(TOKEN);
    expect(migrated).toContain('enc1.');
  });

  it('seals a value that looks sealed: GET, list, status and PATCH answer, and the header is delivered as sent', async () => {
    const recv = await bed.receivers.start();
    const topic = unique('t');
    const LOOKALIKE = 'enc1.AAAA.BBBB';
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, headers: { 'X-Token': LOOKALIKE } });
    const got = await bed.call('GET', `/webhooks/${w.name}`);
    expect(got.status).toBe(200);
    expect(got.body.data.headers).toEqual({ 'X-Token': LOOKALIKE });
    expect((await bed.call('GET', '/webhooks?limit=100')).status).toBe(200);
    expect((await bed.call('GET', `/webhooks/${w.name}/status`)).status).toBe(200);
    expect((await bed.call('PATCH', `/webhooks/${w.name}`, { retry_delay: 2 })).status).toBe(200);
    const item = JSON.stringify((await raw.send(new GetItemCommand({ TableName: TABLES.meta.localName, Key: { pk: { S: `NS#${bed.ns.name}` }, sk: { S: `WEBHOOK#${w.name}` } } }))).Item);
    expect(item).not.toContain(`"${LOOKALIKE}"`); // sealed like any other value
    expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'x' })).status).toBe(201);
    const [req] = await recv.waitFor(1);
    expect(req.headers['x-token']).toBe(LOOKALIKE);
  });

  it('reads a value an earlier version stored unsealed because it looked sealed, as it was written', async () => {
    const recv = await bed.receivers.start();
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic });
    const key = { pk: { S: `NS#${bed.ns.name}` }, sk: { S: `WEBHOOK#${w.name}` } };
    const legacy = unmarshall((await raw.send(new GetItemCommand({ TableName: TABLES.meta.localName, Key: key }))).Item!);
    delete legacy.sealing; // written before the marker
    legacy.config.headers = { 'X-Token': 'enc1.AAAA.BBBB' };
    await raw.send(new PutItemCommand({ TableName: TABLES.meta.localName, Item: marshall(legacy) }));
    const got = await bed.call('GET', `/webhooks/${w.name}`);
    expect(got.status).toBe(200);
    expect(got.body.data.headers).toEqual({ 'X-Token': 'enc1.AAAA.BBBB' });
    expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'x' })).status).toBe(201);
    const [req] = await recv.waitFor(1);
    expect(req.headers['x-token']).toBe('enc1.AAAA.BBBB');
  });

  it('a sealed value that cannot be opened fails its deliveries with a clear error, never the reads or a PATCH', async () => {
    const recv = await bed.receivers.start();
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, headers: { 'X-Token': TOKEN }, retry_count: 0 });
    const key = { pk: { S: `NS#${bed.ns.name}` }, sk: { S: `WEBHOOK#${w.name}` } };
    const stored = unmarshall((await raw.send(new GetItemCommand({ TableName: TABLES.meta.localName, Key: key }))).Item!);
    const parts = String(stored.config.headers['X-Token']).split('.');
    parts[3] = Buffer.from('tampered').toString('base64url');
    stored.config.headers['X-Token'] = parts.join('.');
    await raw.send(new PutItemCommand({ TableName: TABLES.meta.localName, Item: marshall(stored) }));

    const got = await bed.call('GET', `/webhooks/${w.name}`);
    expect(got.status).toBe(200);
    expect(got.body.data.headers['X-Token']).not.toContain('enc1.');
    expect((await bed.call('GET', '/webhooks?limit=100')).status).toBe(200);
    expect((await bed.call('PATCH', `/webhooks/${w.name}`, { retry_delay: 2 })).status).toBe(200);
    expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'x' })).status).toBe(201);
    let status: Record<string, unknown> = {};
    for (let i = 0; i < 100 && !status.last_error; i++) {
      const s = await bed.call('GET', `/webhooks/${w.name}/status`);
      expect(s.status).toBe(200);
      status = s.body.data;
      if (!status.last_error) await new Promise((r) => setTimeout(r, 200));
    }
    expect(String(status.last_error)).toMatch(/headers\.X-Token.*cannot be opened/);
    expect(recv.requests.length).toBe(0);
    // A new value replaces it and deliveries work again.
    expect((await bed.call('PATCH', `/webhooks/${w.name}`, { headers: { 'X-Token': TOKEN } })).status).toBe(200);
    expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'y' })).status).toBe(201);
    const [req] = await recv.waitFor(1);
    expect(req.headers['x-token']).toBe(TOKEN);
  });
});
