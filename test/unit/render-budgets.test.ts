/**
 * Render budgets: every template (body, headers, hook payloads) is bounded before it is rendered,
 * from the template and the message's size, and a delivery's configured headers render to at most
 * MAX_RENDERED_HEADERS_BYTES. One 8 KiB header of `{{.payload}}` x682 with a 256 KiB message used
 * to build a 175 MB header string for one delivery (ten jobs of a batch at once in a 512 MB
 * function: an out-of-memory kills everyone's batch).
 */
import { buildRequest } from '../../lambda/webhooks/rules/delivery';
import type { PublishedMessage } from '../../lambda/core/rules/message';
import { newSecret } from '../../lambda/webhooks/rules/signatures';
import { MAX_RENDERED_HEADERS_BYTES, renderWithin } from '../../lambda/webhooks/rules/templates';
import { parseWebhook } from '../../lambda/webhooks/rules/webhooks';
import { ApiError } from '../../lambda/core/rules/errors';

const message = (payload: string): PublishedMessage => ({
  message_id: 'MSG1', topic: 'orders/eu', payload, content_type: 'text/plain', properties: {}, published_at: Date.UTC(2026, 0, 1), size: payload.length,
});
const config = (extra: Record<string, unknown> = {}) => parseWebhook({ name: 'w', url: 'https://x.example/h', topic_filter: 'orders/#', ...extra }).config;
const secret = newSecret();

/** Bytes this process holds (JS heap, plus buffers outside it). */
const held = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.external + m.arrayBuffers;
};

describe('render budgets', () => {
  it('a worst-case header template with a 256 KiB message is refused before rendering: memory stays bounded', () => {
    const c = config({ headers: { 'X-Big': '{{.payload}}'.repeat(682) }, max_payload_size: 1048576 }); // 8,184 characters: within each header's own limit
    const m = message('a'.repeat(256 * 1024));
    const before = held();
    const r = buildRequest(c, secret, m, Date.now()); // kept alive below, so whatever it built is still counted
    const grown = held() - before;
    expect({ grown_under_16_mib: grown < 16 * 1024 * 1024, grown }).toMatchObject({ grown_under_16_mib: true });
    expect(r).toMatchObject({ tooLarge: 682 * 256 * 1024 + 'x-big'.length, what: 'headers' });
  });

  it('headers that fit are rendered as before', () => {
    const r = buildRequest(config({ headers: { 'X-Topic': 't={{.topic}}', 'X-P': '{{.payload}}' } }), secret, message('x'.repeat(1000)), Date.now());
    if ('tooLarge' in r) throw new Error('unexpected');
    expect(r.headers['x-topic']).toBe('t=orders/eu');
    expect(r.headers['x-p']).toBe('x'.repeat(1000));
  });

  it('a delivery whose headers would render past the budget by one byte is refused, at the budget it is sent', () => {
    const name = 'X-P';
    const fits = MAX_RENDERED_HEADERS_BYTES - name.length;
    const ok = buildRequest(config({ headers: { [name]: '{{.payload}}' }, max_payload_size: 1048576 }), secret, message('y'.repeat(fits)), Date.now());
    expect('tooLarge' in ok).toBe(false);
    const over = buildRequest(config({ headers: { [name]: '{{.payload}}' }, max_payload_size: 1048576 }), secret, message('y'.repeat(fits + 1)), Date.now());
    expect(over).toEqual({ tooLarge: MAX_RENDERED_HEADERS_BYTES + 1, what: 'headers' });
  });

  it('headers whose literal text alone exceeds the budget are refused at create with 422 on the field', () => {
    const headers = Object.fromEntries(Array.from({ length: 3 }, (_, i) => [`X-H${i}`, 'v'.repeat(6000)]));
    let err: unknown;
    try {
      config({ headers });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 422, code: 'VALIDATION_ERROR' });
    expect(JSON.stringify((err as ApiError).details)).toMatch(/"field":"headers".*16384/);
  });

  it('a hook payload template is sized before it is rendered', () => {
    const vars = { payload: 'z'.repeat(200 * 1024) };
    const started = process.memoryUsage().heapUsed;
    const r = renderWithin('{{.payload}}'.repeat(5000), vars, 256 * 1024);
    expect(r).toEqual({ tooLarge: 5000 * 200 * 1024 });
    expect(process.memoryUsage().heapUsed - started).toBeLessThan(16 * 1024 * 1024);
    expect(renderWithin('a={{.payload}}', { payload: 'b' }, 10)).toBe('a=b');
  });
});
