import { listPage, MAX_RESPONSE_MESSAGE_BYTES } from '../../lambda/core/rules/response-budget';
import { LAMBDA_RESPONSE_LIMIT_BYTES } from '../../lambda/core/rules/gateway-responses';
import { success } from '../../lambda/core/rules/envelope';

/** The Lambda result a handler returns for `data`: the envelope JSON as the proxy result's body. */
const lambdaResultBytes = (data: object) => Buffer.byteLength(JSON.stringify({ statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(success(data)) }));

describe('listPage', () => {
  it('keeps a page of 100 large webhooks (about 12 MB) under Lambda’s response limit, echoing the items it holds as limit', () => {
    const items = Array.from({ length: 100 }, (_, i) => ({ name: `w${i}`, body_template: '"{{.payload}}"'.repeat(8_000), headers: { a: 'b'.repeat(8_000) } }));
    expect(lambdaResultBytes({ webhooks: items, total: 100, limit: 100, offset: 0 })).toBeGreaterThan(LAMBDA_RESPONSE_LIMIT_BYTES);
    const page = listPage('webhooks', items, 100, 100, 0);
    expect(page.webhooks.length).toBeGreaterThan(1);
    expect(page.webhooks.length).toBeLessThan(100);
    expect(page.limit).toBe(page.webhooks.length);
    expect(page.webhooks).toEqual(items.slice(0, page.webhooks.length));
    expect(lambdaResultBytes(page)).toBeLessThan(LAMBDA_RESPONSE_LIMIT_BYTES);
    // Paging on with offset + limit misses nothing.
    const next = listPage('webhooks', items.slice(page.limit), 100, 100, page.limit);
    expect(next.webhooks[0]).toEqual(items[page.limit]);
  });

  it('leaves a page that fits as it is', () => {
    const items = [{ name: 'a' }, { name: 'b' }];
    expect(listPage('queues', items, 2, 50, 0)).toEqual({ queues: items, total: 2, limit: 50, offset: 0 });
  });

  it('always returns the first item, however large', () => {
    const big = { name: 'x'.repeat(MAX_RESPONSE_MESSAGE_BYTES) };
    expect(listPage('streams', [big, { name: 'y' }], 2, 10, 0)).toEqual({ streams: [big], total: 2, limit: 1, offset: 0 });
  });
});
