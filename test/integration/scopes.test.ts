/**
 * Scopes that say what a key can do (DESIGN.md section 2): what publishes later on a key's behalf
 * (schedules, redrive) needs `publish` as well as `manage`; keys without `manage` see a webhook's
 * name, filter, status and URL origin, nothing that can hold a secret.
 */
import { client } from '../fixtures/http';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';

jest.setTimeout(60_000);

const bed = webhookTestbed('scp');
const as = (key: 'manage' | 'publish' | 'consume') => client(bed.server.baseUrl, bed.ns.keys[key]);

describe('schedules and redrive need publish as well as manage', () => {
  it('a manage-only key cannot create or change a schedule, nor redrive (403, nothing done); the * key can', async () => {
    const name = unique('sch');
    const body = { name, every: 3600, topic: 'x', payload: 'p', enabled: false };
    const refused = await as('manage')('POST', '/schedules', body);
    expect(refused.status).toBe(403);
    expect(refused.body.error?.code).toBe('INSUFFICIENT_PERMISSIONS');
    expect((await bed.call('GET', `/schedules/${name}`)).status).toBe(404);

    expect((await bed.call('POST', '/schedules', body)).status).toBe(201);
    for (const [method, change] of [['PUT', { every: 60, topic: 'x', payload: 'p' }], ['PATCH', { every: 60 }]] as const) {
      const r = await as('manage')(method, `/schedules/${name}`, change);
      expect({ method, status: r.status, code: r.body.error?.code }).toEqual({ method, status: 403, code: 'INSUFFICIENT_PERMISSIONS' });
    }
    expect((await bed.call('GET', `/schedules/${name}`)).body.data.every).toBe(3600);
    expect((await as('manage')('DELETE', `/schedules/${name}`)).status).toBe(200); // deleting publishes nothing

    const q = unique('q');
    expect((await bed.call('POST', '/queues', { name: q, topic_filter: `${q}/#` })).status).toBe(201);
    const redrive = await as('manage')('POST', `/queues/${q}/redrive`, { topic: 'elsewhere' });
    expect(redrive.status).toBe(403);
    expect(redrive.body.error?.code).toBe('INSUFFICIENT_PERMISSIONS');
    // A publish-only key lacks manage.
    expect((await as('publish')('POST', '/schedules', { ...body, name: unique('sch') })).status).toBe(403);
  });
});

describe('what keys without manage see of a webhook', () => {
  it('name, filter, status and URL origin; no templates, headers, hooks, condition or TLS material', async () => {
    const name = unique('wh');
    const created = await bed.call('POST', '/webhooks', {
      name, url: 'https://hooks.example.com/in/tok-path?token=q-s3cr3t', topic_filter: 'a/#', enabled: false,
      headers: { Authorization: 'Bearer h-s3cr3t' },
      body_template: { token: 'b-s3cr3t', data: '{{.payload}}' },
      on_success: { topic: 'ok', payload: 'hook-s3cr3t {{.response}}' },
      on_failure: { topic: 'ko', payload: 'hook2-s3cr3t' },
      condition: { field: 'kind', operator: '==', value: 'c-s3cr3t' },
      tls: { client_cert: '-----BEGIN CERTIFICATE-----\nCERT-s3cr3t\n-----END CERTIFICATE-----\n', client_key: '-----BEGIN PRIVATE KEY-----\nKEY-s3cr3t\n-----END PRIVATE KEY-----\n' },
    });
    expect(created.status).toBe(201);
    const full = (await as('manage')('GET', `/webhooks/${name}`)).body.data;
    expect(full.body_template).toEqual({ token: 'b-s3cr3t', data: '{{.payload}}' });
    for (const key of ['publish', 'consume'] as const) {
      const one = await as(key)('GET', `/webhooks/${name}`);
      expect(one.status).toBe(200);
      const list = await as(key)('GET', '/webhooks?limit=100');
      const listed = list.body.data.webhooks.find((x: { name: string }) => x.name === name);
      for (const view of [one.body.data, listed]) {
        expect(JSON.stringify(view)).not.toMatch(/s3cr3t|tok-path/);
        expect(view).toMatchObject({ name, topic_filter: 'a/#', url: 'https://hooks.example.com', enabled: false, status: 'disabled' });
        for (const field of ['headers', 'body_template', 'on_success', 'on_failure', 'condition', 'tls']) expect(view).not.toHaveProperty(field);
      }
      expect((await as(key)('GET', `/webhooks/${name}/status`)).body.data).toMatchObject({ name, success_count: 0, failure_count: 0 });
    }
  });
});
