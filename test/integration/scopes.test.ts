/**
 * Scopes that say what a key can do (DESIGN.md section 2): what publishes later on a key's behalf
 * (schedules, redrive) needs `publish` as well as `manage`; keys without `manage` see a webhook's
 * name, filter, status and URL origin, nothing that can hold a secret.
 */
import { client } from '../fixtures/http';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { applySeed } from '../../local/seed';
import { until } from '../fixtures/receiver';

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

describe('what keys without manage see of a schedule', () => {
  it('its name, timing, topic and runs; not the payload, properties or partition key it publishes', async () => {
    const name = unique('sch');
    const created = await bed.call('POST', '/schedules', { name, every: 3600, topic: 'x', payload: 'pay-s3cr3t {{.schedule}}', properties: { token: 'prop-s3cr3t' }, partition_key: 'pk-s3cr3t', enabled: false });
    expect(created.status).toBe(201);
    expect((await as('manage')('GET', `/schedules/${name}`)).body.data).toMatchObject({ payload: 'pay-s3cr3t {{.schedule}}', properties: { token: 'prop-s3cr3t' }, partition_key: 'pk-s3cr3t' });
    for (const key of ['publish', 'consume'] as const) {
      const one = await as(key)('GET', `/schedules/${name}`);
      expect(one.status).toBe(200);
      const listed = (await as(key)('GET', '/schedules?limit=100')).body.data.schedules.find((x: { name: string }) => x.name === name);
      for (const view of [one.body.data, listed]) {
        expect(JSON.stringify(view)).not.toMatch(/s3cr3t/);
        expect(view).toMatchObject({ name, every: 3600, topic: 'x', enabled: false, payload: '[redacted]', properties: { token: '[redacted]' }, partition_key: '[redacted]' });
      }
    }
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

describe('webhooks: hooks need publish, delivering needs consume (docs/security.md)', () => {
  /** Keys with two scopes, added to the bed's namespace. */
  const pair = { managePublish: `mp-${unique('k')}`, manageConsume: `mc-${unique('k')}` };
  beforeAll(async () => {
    await applySeed({ namespaces: [{ name: bed.ns.name, keys: [{ key: pair.managePublish, scopes: ['manage', 'publish'] }, { key: pair.manageConsume, scopes: ['manage', 'consume'] }] }] });
  });
  const asPair = (k: keyof typeof pair) => client(bed.server.baseUrl, pair[k]);
  const refusedFor = (r: { status: number; body: { error?: { code: string; details: Record<string, unknown> } | null } }) => ({ status: r.status, code: r.body.error?.code, scope: r.body.error?.details.required_scope });
  const hook = { topic: 'hooked', payload: 'done {{.response}}' };

  it('a manage-only key cannot create or change a webhook with hooks (403 publish, nothing stored); manage+publish can', async () => {
    const url = 'http://127.0.0.1:9/in';
    for (const extra of [{ on_success: hook }, { on_failure: hook }, { on_failure: 'send_to_dlq', dead_letter_topic: 'dlq' }]) {
      const name = unique('wh');
      const r = await as('manage')('POST', '/webhooks', { name, url, topic_filter: 'a/#', enabled: false, ...extra });
      expect({ extra, ...refusedFor(r) }).toEqual({ extra, status: 403, code: 'INSUFFICIENT_PERMISSIONS', scope: 'publish' });
      expect((await bed.call('GET', `/webhooks/${name}`)).status).toBe(404);
    }
    const name = unique('wh');
    expect((await as('manage')('POST', '/webhooks', { name, url, topic_filter: 'a/#', enabled: false })).status).toBe(201);
    expect(refusedFor(await as('manage')('PATCH', `/webhooks/${name}`, { on_success: hook }))).toEqual({ status: 403, code: 'INSUFFICIENT_PERMISSIONS', scope: 'publish' });
    expect(refusedFor(await as('manage')('PUT', `/webhooks/${name}`, { url, topic_filter: 'a/#', enabled: false, on_failure: hook }))).toEqual({ status: 403, code: 'INSUFFICIENT_PERMISSIONS', scope: 'publish' });
    expect((await bed.call('GET', `/webhooks/${name}`)).body.data.on_success ?? null).toBeNull();
    expect((await asPair('managePublish')('PATCH', `/webhooks/${name}`, { on_success: hook })).status).toBe(200);
    // Once it has hooks, any change of it makes them publish on the key's behalf; removing them publishes nothing.
    expect(refusedFor(await as('manage')('PATCH', `/webhooks/${name}`, { retry_count: 1 }))).toEqual({ status: 403, code: 'INSUFFICIENT_PERMISSIONS', scope: 'publish' });
    expect((await as('manage')('PATCH', `/webhooks/${name}`, { on_success: null })).status).toBe(200);
    expect((await asPair('managePublish')('PATCH', `/webhooks/${name}`, { on_success: hook })).status).toBe(200);
    expect((await as('manage')('DELETE', `/webhooks/${name}`)).status).toBe(200); // deleting publishes nothing
  });

  it('a key without consume cannot make a webhook deliver, nor replay: 403 consume; a disabled one it may create and change', async () => {
    const rx = await bed.receivers.start();
    const name = unique('wh');
    const topic = `${name}/t`;
    const body = { name, url: rx.url, topic_filter: `${name}/#` };
    // Enabled (the default): it would deliver every payload its filter matches to the URL.
    for (const b of [body, { ...body, enabled: true }]) expect(refusedFor(await as('manage')('POST', '/webhooks', b))).toEqual({ status: 403, code: 'INSUFFICIENT_PERMISSIONS', scope: 'consume' });
    expect(refusedFor(await asPair('managePublish')('POST', '/webhooks', body))).toEqual({ status: 403, code: 'INSUFFICIENT_PERMISSIONS', scope: 'consume' });
    expect((await bed.call('GET', `/webhooks/${name}`)).status).toBe(404);
    // Disabled, it delivers nothing: manage alone creates and changes it (the conformance suite's case).
    expect((await as('manage')('POST', '/webhooks', { ...body, enabled: false })).status).toBe(201);
    expect((await as('manage')('PATCH', `/webhooks/${name}`, { retry_count: 0, url: rx.url })).status).toBe(200);
    for (const enabling of [{ enabled: true }, { enabled: null }]) { // null resets to the default, enabled
      expect(refusedFor(await as('manage')('PATCH', `/webhooks/${name}`, enabling))).toEqual({ status: 403, code: 'INSUFFICIENT_PERMISSIONS', scope: 'consume' });
    }
    expect(refusedFor(await as('manage')('PUT', `/webhooks/${name}`, { url: rx.url, topic_filter: `${name}/#` }))).toEqual({ status: 403, code: 'INSUFFICIENT_PERMISSIONS', scope: 'consume' });
    expect((await bed.call('GET', `/webhooks/${name}`)).body.data.enabled).toBe(false);
    expect((await asPair('manageConsume')('PATCH', `/webhooks/${name}`, { enabled: true })).status).toBe(200);
    // Enabled, a change of it by manage alone is refused too (it could move the URL).
    expect(refusedFor(await as('manage')('PATCH', `/webhooks/${name}`, { url: `${rx.url}x` }))).toEqual({ status: 403, code: 'INSUFFICIENT_PERMISSIONS', scope: 'consume' });
    expect((await as('manage')('PATCH', `/webhooks/${name}`, { enabled: false })).status).toBe(200); // stopping delivers nothing

    // Replay sends stored payloads to the webhook's URL: consume as well.
    const failing = unique('wh');
    expect((await bed.call('POST', '/webhooks', { name: failing, url: 'http://127.0.0.1:9/closed', topic_filter: topic, retry_count: 0 })).status).toBe(201);
    const id = (await bed.call('POST', `/topics/${topic}/messages`, { payload: 'p' })).body.data.message_id as string;
    for (const [path, b] of [[`/webhooks/${failing}/deliveries/${id}/replay`, undefined], [`/webhooks/${failing}/replay`, { since: new Date(0).toISOString() }]] as const) {
      expect(refusedFor(await as('manage')('POST', path, b))).toEqual({ status: 403, code: 'INSUFFICIENT_PERMISSIONS', scope: 'consume' });
    }
    expect((await asPair('manageConsume')('POST', `/webhooks/${failing}/replay`, { since: new Date(0).toISOString() })).status).toBe(200);
  });

  it('a replay that would run a hook needs publish too (403 publish, nothing queued); with it the hook publishes again', async () => {
    const rx = await bed.receivers.start({ status: 500 });
    const name = unique('wh');
    const hooked = `${name}-hooked`;
    expect((await bed.call('POST', '/queues', { name: hooked, topic_filter: hooked })).status).toBe(201);
    const count = async () => (await bed.call('GET', `/queues/${hooked}`)).body.data.message_count as number;
    expect((await bed.call('POST', '/webhooks', { name, url: rx.url, topic_filter: `${name}/#`, retry_count: 0, on_failure: { topic: hooked, payload: 'failed {{.error}}' } })).status).toBe(201);
    const id = (await bed.call('POST', `/topics/${name}/t/messages`, { payload: 'p' })).body.data.message_id as string;
    await until(async () => ((await count()) === 1 ? true : undefined), 20_000, 'the on_failure hook of the first delivery');
    // The delivery fails again on replay, and its on_failure hook publishes on the replayer's behalf.
    for (const [path, b] of [[`/webhooks/${name}/deliveries/${id}/replay`, undefined], [`/webhooks/${name}/replay`, { since: new Date(0).toISOString() }]] as const) {
      expect(refusedFor(await asPair('manageConsume')('POST', path, b))).toEqual({ status: 403, code: 'INSUFFICIENT_PERMISSIONS', scope: 'publish' });
    }
    expect((await bed.call('POST', `/webhooks/${name}/deliveries/${id}/replay`)).status).toBe(200);
    await until(async () => ((await count()) === 2 ? true : undefined), 20_000, 'the hook of the replay the * key made');
    expect(await count()).toBe(2);
  });

  it('a key without consume cannot issue a portal link (403 consume): the session it opens creates enabled webhooks', async () => {
    // A session is judged as manage and consume (docs/portal.md) and may name any filter of the
    // namespace: a link from a manage-only key would let it read every payload through `#`.
    const uid = unique('cust');
    expect((await as('manage')('POST', '/applications', { uid })).status).toBe(201);
    expect(refusedFor(await as('manage')('POST', `/applications/${uid}/portal-access`, {}))).toEqual({ status: 403, code: 'INSUFFICIENT_PERMISSIONS', scope: 'consume' });
    expect(refusedFor(await asPair('managePublish')('POST', `/applications/${uid}/portal-access`, {}))).toEqual({ status: 403, code: 'INSUFFICIENT_PERMISSIONS', scope: 'consume' });
    const link = await asPair('manageConsume')('POST', `/applications/${uid}/portal-access`, {});
    expect(link.status).toBe(201);
    // Revoking opens nothing: manage alone may end a customer's access.
    expect((await as('manage')('DELETE', `/applications/${uid}/portal-access`)).status).toBe(200);
  });
});

describe('queues: a dead_letter_topic publishes on the key\'s behalf', () => {
  it('a manage-only key cannot create a queue with a dead_letter_topic (403 publish, nothing created); without one it can', async () => {
    const name = unique('q');
    const r = await as('manage')('POST', '/queues', { name, topic_filter: `${name}/#`, max_retries: 0, dead_letter_topic: 'payments/refund' });
    expect({ status: r.status, code: r.body.error?.code, scope: r.body.error?.details.required_scope }).toEqual({ status: 403, code: 'INSUFFICIENT_PERMISSIONS', scope: 'publish' });
    expect((await bed.call('GET', `/queues/${name}`)).status).toBe(404);
    expect((await as('manage')('POST', '/queues', { name, topic_filter: `${name}/#` })).status).toBe(201);
    expect((await as('manage')('DELETE', `/queues/${name}`)).status).toBe(200);
  });
});
