import { ApiError } from '../../lambda/core/rules/errors';
import { configView, parseWebhook, parseWebhookPatch, WEBHOOK_DEFAULTS, webhookTestSchema } from '../../lambda/webhooks/rules/webhooks';
import { parse } from '../../lambda/core/rules/validation';
import { refusal } from '../fixtures/errors';

const base = { name: 'w1', url: 'https://hooks.example.com/x', topic_filter: 'orders/#' };
const fields = (e: ApiError) => ((e.details.fields as { field: string }[]) ?? []).map((f) => f.field);

describe('parseWebhook', () => {
  it('applies the DESIGN.md section 9 defaults', () => {
    const { config, secret } = parseWebhook(base);
    expect(config).toEqual({ url: base.url, topic_filter: base.topic_filter, ...WEBHOOK_DEFAULTS, debug: false, log_requests: false, log_responses: false });
    expect(secret).toBeUndefined();
  });

  it('takes max_retries as an alias of retry_count', () => {
    expect(parseWebhook({ ...base, max_retries: 5 }).config.retry_count).toBe(5);
    expect(parseWebhook({ ...base, max_retries: 5, retry_count: 5 }).config.retry_count).toBe(5);
    expect(fields(refusal(() => parseWebhook({ ...base, max_retries: 5, retry_count: 4 })))).toEqual(['max_retries']);
  });

  it.each([
    ['timeout', 0], ['timeout', 31], ['retry_count', 21], ['retry_count', -1], ['retry_delay', 3601], ['max_retry_delay', 86401],
    ['backoff_multiplier', 0.5], ['backoff_multiplier', 11], ['max_payload_size', 0], ['max_payload_size', 1048577], ['method', 'TRACE'],
    ['compression', 'br'], ['url', 'ftp://x.example/'], ['name', 'no/slash'], ['dead_letter_topic', 'a//b'],
  ])('refuses %s %j with 422 on that field', (field, value) => {
    const e = refusal(() => parseWebhook({ ...base, [field]: value }));
    expect([e.status, e.code]).toEqual([422, 'VALIDATION_ERROR']);
    expect(fields(e)).toContain(field);
  });

  it.each([['timeout', '10'], ['enabled', 'yes'], ['headers', 'x'], ['body_template', []], ['condition', 'amount > 1'], ['tls', true]])('refuses %s of the wrong type %j with 400', (field, value) => {
    expect(refusal(() => parseWebhook({ ...base, [field]: value })).code).toBe('INVALID_REQUEST');
  });

  it('refuses a missing url with 422 naming url', () => {
    expect(fields(refusal(() => parseWebhook({ name: 'w', topic_filter: 'a' })))).toEqual(['url']);
  });

  it('refuses an invalid topic filter with 400 INVALID_TOPIC_FILTER', () => {
    expect(refusal(() => parseWebhook({ ...base, topic_filter: 'a/#/b' })).code).toBe('INVALID_TOPIC_FILTER');
  });

  it.each([
    ['a CRLF in a header value', { 'X-A': 'a\r\nX-Evil: 1' }, 'headers.X-A'],
    ['an LF in a header value', { 'X-A': 'a\nb' }, 'headers.X-A'],
    ['a CRLF in a header name', { 'X-A\r\nX-Evil': '1' }, 'headers.X-A\r\nX-Evil'],
    ['a space in a header name', { 'X A': '1' }, 'headers.X A'],
    ['a colon in a header name', { 'X-A:': '1' }, 'headers.X-A:'],
    ['a reserved header', { 'Content-Length': '5' }, 'headers.Content-Length'],
    ['a signature header', { 'webhook-signature': 'v1,x' }, 'headers.webhook-signature'],
  ])('refuses %s with 422 (header injection)', (_what, headers, field) => {
    const e = refusal(() => parseWebhook({ ...base, headers }));
    expect(e.status).toBe(422);
    expect(fields(e)).toContain(field);
  });

  it('accepts header values with placeholders', () => {
    expect(parseWebhook({ ...base, headers: { 'X-Sig': '{{.signature}}', Authorization: 'Bearer t' } }).config.headers).toEqual({ 'X-Sig': '{{.signature}}', Authorization: 'Bearer t' });
  });

  it('refuses an unknown condition operator with 422', () => {
    expect(refusal(() => parseWebhook({ ...base, condition: { field: 'a', operator: '=~', value: 1 } })).status).toBe(422);
  });

  it('requires dead_letter_topic with send_to_dlq', () => {
    expect(fields(refusal(() => parseWebhook({ ...base, on_failure: 'send_to_dlq' })))).toEqual(['dead_letter_topic']);
    expect(parseWebhook({ ...base, on_failure: 'send_to_dlq', dead_letter_topic: 'dlq/x' }).config.on_failure).toBe('send_to_dlq');
  });

  it('requires client_cert and client_key together', () => {
    expect(fields(refusal(() => parseWebhook({ ...base, tls: { client_cert: 'x' } })))).toEqual(['tls.client_key']);
  });

  it('checks a given secret', () => {
    expect(fields(refusal(() => parseWebhook({ ...base, secret: 'plain' })))).toEqual(['secret']);
  });

  it('refuses a PUT body whose name differs from the path', () => {
    expect(fields(refusal(() => parseWebhook({ ...base, name: 'other' }, 'w1')))).toEqual(['name']);
    expect(parseWebhook({ url: base.url, topic_filter: 'a' }, 'w1').name).toBe('w1');
  });
});

describe('parseWebhookPatch', () => {
  const stored = parseWebhook({ ...base, retry_count: 7, headers: { 'X-Keep': 'yes' }, compression: 'gzip' }).config;

  it('changes only the given fields', () => {
    const { config } = parseWebhookPatch('w1', stored, { retry_delay: 4, method: 'put' });
    expect(config).toEqual({ ...stored, retry_delay: 4, method: 'PUT' });
  });
  it('resets a field given as null', () => {
    expect(parseWebhookPatch('w1', stored, { compression: null }).config.compression).toBeUndefined();
    expect(parseWebhookPatch('w1', stored, { retry_count: null }).config.retry_count).toBe(3);
  });
  it('takes max_retries over the stored retry_count', () => {
    expect(parseWebhookPatch('w1', stored, { max_retries: 2 }).config.retry_count).toBe(2);
  });
  it('validates the result like a create', () => {
    expect(refusal(() => parseWebhookPatch('w1', stored, { topic_filter: 'a/#/b' })).code).toBe('INVALID_TOPIC_FILTER');
    expect(fields(refusal(() => parseWebhookPatch('w1', stored, { url: 'file:///etc/passwd' })))).toEqual(['url']);
    expect(fields(refusal(() => parseWebhookPatch('w1', stored, { url: null })))).toEqual(['url']);
  });
  it('refuses a body that is not an object', () => {
    expect(refusal(() => parseWebhookPatch('w1', stored, [1])).code).toBe('INVALID_REQUEST');
  });
});

describe('configView', () => {
  it('shows unset optional fields as null (headers as {}) and never a secret', () => {
    const view = configView(parseWebhook(base).config, { manage: true });
    expect(view).toMatchObject({ headers: {}, compression: null, condition: null, on_failure: null });
    expect(JSON.stringify(view)).not.toContain('whsec_');
  });

  const withSecrets = parseWebhook({
    ...base, headers: { Authorization: 'Bearer t0k3n' }, tls: { verify_ssl: false, client_cert: '-----BEGIN CERTIFICATE-----c', client_key: '-----BEGIN PRIVATE KEY-----k' },
  }).config;

  it('never shows tls.client_key', () => {
    const view = configView(withSecrets, { manage: true });
    expect(view.tls).toEqual({ verify_ssl: false, client_cert: '-----BEGIN CERTIFICATE-----c' });
    expect(JSON.stringify(view)).not.toContain('PRIVATE KEY');
  });

  it('shows keys without manage only the filter, enabled and the URL origin', () => {
    expect(configView(withSecrets, { manage: true }).headers).toEqual({ Authorization: 'Bearer t0k3n' });
    expect(configView(withSecrets, { manage: false })).toEqual({ url: 'https://hooks.example.com', topic_filter: withSecrets.topic_filter, enabled: true });
  });
});

describe('wrong JSON types in a webhook body', () => {
  const statusOf = (body: Record<string, unknown>) => refusal(() => parseWebhook({ ...base, ...body })).status;

  it.each([
    ['name', 5], ['url', 5], ['topic_filter', 5], ['method', 5], ['method', ['POST']], ['enabled', 'true'], ['headers', []], ['headers', 'x'],
    ['headers', { 'X-A': 5 }], ['body_template', 'x'], ['body_template', [1]], ['timeout', '5'], ['retry_count', '3'], ['max_retries', true],
    ['retry_delay', null], ['max_retry_delay', '1'], ['backoff_multiplier', '2'], ['dead_letter_topic', 5], ['on_failure', 5], ['on_failure', true],
    ['on_failure', ['send_to_dlq']], ['on_failure', { topic: 5, payload: 'x' }], ['on_failure', { topic: 'a', payload: 5 }], ['on_success', 'x'],
    ['on_success', { topic: 'a', payload: [] }], ['condition', 'x'], ['condition', { field: 5, operator: '==', value: 1 }],
    ['condition', { field: 'a', operator: 5, value: 1 }], ['condition', { field: 'a', operator: '==', value: true }],
    ['condition', { field: 'a', operator: '==', value: {} }], ['condition', { field: 'a', operator: '==', value: null }], ['tls', 'x'],
    ['tls', { verify_ssl: 'no' }], ['tls', { ca_cert: 5 }], ['max_payload_size', '1000'], ['compression', 5], ['compression', true],
    ['compression', null], ['debug', 1], ['log_requests', 'yes'], ['log_responses', {}], ['secret', 5],
  ])('answers 400 INVALID_REQUEST for %s: %j', (field, value) => {
    // null is a wrong type at create and PUT (PATCH reads null as "reset to the default").
    expect(statusOf({ [field]: value })).toBe(400);
  });

  it.each([
    ['method', 'GET'], ['compression', 'zip'], ['on_failure', 'send_somewhere'], ['condition', { field: 'a', operator: '~', value: 1 }], ['timeout', 31],
  ])('answers 422 VALIDATION_ERROR for %s with a value of the right type out of its set or range: %j', (field, value) => {
    expect(statusOf({ [field]: value })).toBe(422);
  });

  it('applies the same to PATCH and to POST /webhooks/test', () => {
    const stored = parseWebhook(base).config;
    expect(refusal(() => parseWebhookPatch('w1', stored, { compression: 5 })).status).toBe(400);
    expect(refusal(() => parseWebhookPatch('w1', stored, { compression: 'zip' })).status).toBe(422);
    expect(refusal(() => parse(webhookTestSchema, { name: 'w', url: 'https://x.example/h', topic_filter: 'a', method: 5 })).status).toBe(400);
  });
});
