/**
 * Webhook credentials (docs/security.md): configured header values and `tls.client_key` are
 * secrets. Reads never return the client key and show header values only to `manage` keys; the
 * request lines that `debug` and `log_requests` write redact them too.
 */
import { client } from '../fixtures/http';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { webhookTestbed } from '../fixtures/webhook-testbed';

jest.setTimeout(30_000);

const bed = webhookTestbed('whs');

const CLIENT_KEY = '-----BEGIN PRIVATE KEY-----\nTOP-SECRET-KEY-MATERIAL\n-----END PRIVATE KEY-----\n';
const CLIENT_CERT = '-----BEGIN CERTIFICATE-----\nPUBLIC-CERT\n-----END CERTIFICATE-----\n';
const TOKEN = 'Bearer tok-7f3a9c-do-not-leak';


async function secretHook(extra: Record<string, unknown> = {}) {
  return createWebhook(bed.call, {
    url: 'https://hooks.example.com/in', topic_filter: `${unique('t')}/#`, enabled: false,
    headers: { Authorization: TOKEN, 'X-Tenant': 'acme' }, tls: { client_cert: CLIENT_CERT, client_key: CLIENT_KEY }, ...extra,
  });
}

describe('webhook reads', () => {
  it('never return tls.client_key, to any key, from create, get, list, PUT or PATCH', async () => {
    const created = await bed.call('POST', '/webhooks', { name: unique('wh'), url: 'https://hooks.example.com/in', topic_filter: 'a/#', enabled: false, tls: { client_cert: CLIENT_CERT, client_key: CLIENT_KEY } });
    expect(created.status).toBe(201);
    const name = created.body.data.name as string;
    const answers = [
      created,
      await bed.call('GET', `/webhooks/${name}`),
      await bed.call('GET', '/webhooks?limit=100'),
      await bed.call('PATCH', `/webhooks/${name}`, { retry_delay: 2 }),
    ];
    for (const res of answers) {
      expect(res.status).toBeLessThan(300);
      expect(res.text).not.toContain('TOP-SECRET-KEY-MATERIAL');
    }
    expect(created.body.data.tls).toEqual({ client_cert: CLIENT_CERT });
  });

  it('show header values to manage keys and no headers at all to other keys (DESIGN.md section 2)', async () => {
    const w = await secretHook();
    const manage = client(bed.server.baseUrl, bed.ns.keys.manage);
    expect((await manage('GET', `/webhooks/${w.name}`)).body.data.headers).toEqual({ Authorization: TOKEN, 'X-Tenant': 'acme' });
    for (const key of [bed.ns.keys.publish, bed.ns.keys.consume]) {
      const reader = client(bed.server.baseUrl, key);
      const one = await reader('GET', `/webhooks/${w.name}`);
      expect(one.status).toBe(200);
      expect(one.body.data).not.toHaveProperty('headers');
      const list = await reader('GET', '/webhooks?limit=100');
      expect(list.text).not.toContain('tok-7f3a9c');
      expect(list.body.data.webhooks.find((x: { name: string }) => x.name === w.name)).not.toHaveProperty('headers');
    }
  });

  it('keep the stored client key when a PUT gives back the same client_cert without it', async () => {
    const w = await secretHook();
    const shown = (await bed.call('GET', `/webhooks/${w.name}`)).body.data;
    const body = Object.fromEntries(Object.entries(shown).filter(([, v]) => v !== null));
    const put = await bed.call('PUT', `/webhooks/${w.name}`, { ...body, retry_count: 5 });
    expect(put.status).toBe(200);
    expect((await getWebhook(bed.ns.name, w.name))?.config.tls).toEqual({ client_cert: CLIENT_CERT, client_key: CLIENT_KEY });
    const other = await bed.call('PUT', `/webhooks/${w.name}`, { ...body, tls: { client_cert: CLIENT_CERT.replace('PUBLIC', 'OTHER') } });
    expect(other.status).toBe(422);
    expect(other.body.error?.details.fields).toEqual([expect.objectContaining({ field: 'tls.client_key' })]);
  });
});
