import { gunzipSync } from 'node:zlib';
import { buildRequest, deliveryBody, loggableHeaders, PAYLOAD_TOO_LARGE } from '../../lambda/webhooks/rules/delivery';
import { APPLICATION_PROPERTY, type PublishedMessage } from '../../lambda/core/rules/message';
import { newSecret, signatureHeader } from '../../lambda/webhooks/rules/signatures';
import { parseWebhook, type WebhookConfig } from '../../lambda/webhooks/rules/webhooks';
import { deliveryJobs } from '../../lambda/webhooks/fanout';
import type { Binding } from '../../lambda/core/storage/resources';

const message = (p: Partial<PublishedMessage> = {}): PublishedMessage => ({
  message_id: 'MSG1', topic: 'orders/eu', payload: '{"amount":150}', content_type: 'application/json', properties: { region: 'eu' }, published_at: Date.UTC(2026, 0, 1), size: 14, ...p,
});
const config = (extra: Record<string, unknown> = {}): WebhookConfig => parseWebhook({ name: 'w', url: 'https://x.example/h', topic_filter: 'orders/#', ...extra }).config;
const secret = newSecret();

describe('buildRequest', () => {
  it('sends the default body with JSON content type and the Standard Webhooks headers', () => {
    const r = buildRequest(config(), secret, message(), 1_800_000_000_123);
    if ('tooLarge' in r) throw new Error('unexpected');
    expect(JSON.parse(r.body.toString())).toEqual({ topic: 'orders/eu', payload: '{"amount":150}', timestamp: '2026-01-01T00:00:00.000Z', message_id: 'MSG1', properties: { region: 'eu' } });
    expect(r.headers).toMatchObject({ 'content-type': 'application/json', 'webhook-id': 'MSG1', 'webhook-timestamp': '1800000000' });
    expect(r.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
  });

  it('renders header placeholders and strips CR/LF a payload brings into them', () => {
    const r = buildRequest(config({ headers: { 'X-Payload': 'p={{.payload}}', 'X-Sig': '{{.signature}}' } }), secret, message({ payload: 'a\r\nX-Injected: 1' }), Date.now());
    if ('tooLarge' in r) throw new Error('unexpected');
    expect(r.headers['x-payload']).toBe('p=aX-Injected: 1');
    expect(r.headers['x-injected']).toBeUndefined();
    expect(r.headers['x-sig']).toBe(signatureHeader(r.body, secret));
  });

  it('lets a configured Content-Type win but never a signature header', () => {
    const r = buildRequest(config({ headers: { 'Content-Type': 'text/plain' } }), secret, message(), Date.now());
    if ('tooLarge' in r) throw new Error('unexpected');
    expect(r.headers['content-type']).toBe('text/plain');
  });

  it('gzips the body, signing the uncompressed bytes', () => {
    const r = buildRequest(config({ compression: 'gzip', headers: { 'X-Sig': '{{.signature}}' } }), secret, message(), Date.now());
    if ('tooLarge' in r) throw new Error('unexpected');
    expect(r.headers['content-encoding']).toBe('gzip');
    const plain = gunzipSync(r.body);
    expect(plain.length).toBe(r.size);
    expect(r.headers['x-sig']).toBe(signatureHeader(plain, secret));
  });

  it('reports a body above max_payload_size (measured before compression) instead of building it', () => {
    const c = config({ max_payload_size: 50, compression: 'gzip' });
    expect(buildRequest(c, secret, message({ payload: 'x'.repeat(100) }), Date.now())).toEqual({ tooLarge: deliveryBody(c, message({ payload: 'x'.repeat(100) })).length });
    expect(PAYLOAD_TOO_LARGE).toBe('payload too large');
  });

  it('refuses a template that repeats {{.payload}} thousands of times before rendering it', () => {
    // 5,000 x 120 KB would be a 600 MB string (more than V8 can hold): the size is bounded first.
    const c = config({ body_template: { d: '{{.payload}}'.repeat(5000) } });
    const started = performance.now();
    const r = buildRequest(c, secret, message({ payload: 'x'.repeat(120_000) }), Date.now());
    expect(r).toEqual({ tooLarge: expect.any(Number) });
    expect((r as { tooLarge: number }).tooLarge).toBeGreaterThan(c.max_payload_size);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('renders body_template string values only', () => {
    const body = JSON.parse(deliveryBody(config({ body_template: { e: 'order.{{.topic}}', d: '{{.payload}}', p: '{{.properties}}', n: 5 } }), message()).toString());
    expect(body).toEqual({ e: 'order.orders/eu', d: '{"amount":150}', p: '{"region":"eu"}', n: 5 });
  });
});

describe('deliveryJobs (publish fan-out)', () => {
  const binding = (name: string, settings: Record<string, unknown>): Binding => ({ kind: 'WEBHOOK', name, id: `id-${name}`, topic_filter: 'orders/#', settings });

  it('makes one job per enabled webhook and message whose condition holds', () => {
    const jobs = deliveryJobs('ns', [
      binding('a', { enabled: true }),
      binding('off', { enabled: false }),
      binding('big', { enabled: true, condition: { field: 'amount', operator: '>', value: 100 } }),
      binding('small', { enabled: true, condition: { field: 'amount', operator: '<', value: 100 } }),
    ], [message(), message({ message_id: 'MSG2', payload: '{"amount":1}' })]);
    expect(jobs.map((j) => `${j.webhook_name}:${j.message.message_id}`)).toEqual(['a:MSG1', 'a:MSG2', 'big:MSG1', 'small:MSG2']);
    expect(jobs[0]).toMatchObject({ namespace: 'ns', webhook_id: 'id-a' });
  });

  it('parses each payload once per publish, not once per webhook', () => {
    const parse = jest.spyOn(JSON, 'parse');
    try {
      const bindings = Array.from({ length: 10 }, (_, i) => binding(`w${i}`, { enabled: true, condition: { field: 'amount', operator: '>', value: i * 20 + 1 } }));
      const jobs = deliveryJobs('ns', bindings, [message(), message({ message_id: 'MSG2', payload: '{"amount":1}' })]);
      expect(jobs.map((j) => `${j.webhook_name}:${j.message.message_id}`)).toEqual(['w0:MSG1', 'w1:MSG1', 'w2:MSG1', 'w3:MSG1', 'w4:MSG1', 'w5:MSG1', 'w6:MSG1', 'w7:MSG1']);
      expect(parse).toHaveBeenCalledTimes(2);
    } finally {
      parse.mockRestore();
    }
  });

  it("gives a webhook of an application only the messages addressed to it, and one of none every message", () => {
    const to = (uid?: string, id = `M-${uid ?? 'none'}`) => message({ message_id: id, properties: uid ? { [APPLICATION_PROPERTY]: uid } : {} });
    const jobs = deliveryJobs('ns', [
      binding('a', { enabled: true, application: 'cust-a' }),
      binding('a-eu', { enabled: true, application: 'cust-a', condition: { field: 'properties.region', operator: '==', value: 'eu' } }),
      binding('any', { enabled: true }),
    ], [to('cust-a'), to('cust-b'), to(), to('cust-a', 'M-a-eu')].map((m, i) => (i === 3 ? { ...m, properties: { ...m.properties, region: 'eu' } } : m)));
    expect(jobs.map((j) => `${j.webhook_name}:${j.message.message_id}`)).toEqual(['a:M-cust-a', 'a:M-a-eu', 'a-eu:M-a-eu', 'any:M-cust-a', 'any:M-cust-b', 'any:M-none', 'any:M-a-eu']);
  });

  it('does not parse a payload no condition looks into', () => {
    const parse = jest.spyOn(JSON, 'parse');
    try {
      deliveryJobs('ns', [binding('a', { enabled: true }), binding('p', { enabled: true, condition: { field: 'properties.region', operator: '==', value: 'eu' } })], [message()]);
      expect(parse).not.toHaveBeenCalled();
    } finally {
      parse.mockRestore();
    }
  });
});

describe('loggableHeaders', () => {
  it('redacts the values of configured headers, whatever their case, and keeps the service headers', () => {
    const c = config({ headers: { Authorization: 'Bearer t0k3n', 'X-Api-Key': 'k-123' } });
    const r = buildRequest(c, secret, message(), Date.now());
    if ('tooLarge' in r) throw new Error('unexpected');
    const shown = loggableHeaders(r.headers, c.headers);
    expect(shown).toMatchObject({ authorization: '[redacted]', 'x-api-key': '[redacted]', 'content-type': 'application/json', 'webhook-id': 'MSG1' });
    expect(JSON.stringify(shown)).not.toMatch(/t0k3n|k-123/);
  });
});
