import { cutResponse, headerValue, MAX_RESPONSE_BYTES, renderBodyTemplate, renderedBytes, renderTemplate } from '../../lambda/webhooks/rules/templates';

const vars = { topic: 'orders/eu', payload: '{"a":1}', timestamp: '2026-01-01T00:00:00.000Z', message_id: 'M1', properties: '{"k":"v"}' };

describe('renderTemplate', () => {
  it('replaces every known placeholder and keeps the text around it', () => {
    expect(renderTemplate('{{.topic}}|{{.payload}}|{{.timestamp}}|{{.message_id}}|{{.properties}}', vars)).toBe('orders/eu|{"a":1}|2026-01-01T00:00:00.000Z|M1|{"k":"v"}');
    expect(renderTemplate('order.{{.topic}}.x', vars)).toBe('order.orders/eu.x');
  });
  it('accepts spaces inside the braces', () => expect(renderTemplate('{{ .topic }}', vars)).toBe('orders/eu'));
  it('leaves placeholders without a value as written', () => {
    expect(renderTemplate('{{.response}} {{.unknown}}', vars)).toBe('{{.response}} {{.unknown}}');
  });
  it('never re-scans substituted text (a payload cannot inject another placeholder)', () => {
    expect(renderTemplate('{{.payload}}', { payload: '{{.signature}}', signature: 'SECRET' })).toBe('{{.signature}}');
  });
  it('replaces repeated placeholders', () => expect(renderTemplate('{{.topic}}{{.topic}}', vars)).toBe('orders/euorders/eu'));
  it('leaves names of Object.prototype as written (they would render longer than the size estimate counts)', () => {
    expect(renderTemplate('{{.constructor}}{{.tostring}}{{.__proto__}}', vars)).toBe('{{.constructor}}{{.tostring}}{{.__proto__}}');
    const t = '{{.constructor}}'.repeat(512);
    expect(Buffer.byteLength(renderTemplate(t, vars))).toBe(renderedBytes(t, vars));
  });
});

describe('renderBodyTemplate', () => {
  it('renders string values at any depth and keeps other values', () => {
    expect(renderBodyTemplate({ a: '{{.topic}}', n: 5, f: true, z: null, nested: { b: ['{{.message_id}}', 2] } }, vars)).toEqual({
      a: 'orders/eu', n: 5, f: true, z: null, nested: { b: ['M1', 2] },
    });
  });
  it('does not render keys', () => expect(renderBodyTemplate({ '{{.topic}}': 'x' }, vars)).toEqual({ '{{.topic}}': 'x' }));
  it('keeps {{.payload}} as the raw payload string', () => {
    expect(JSON.parse(JSON.stringify(renderBodyTemplate({ d: '{{.payload}}' }, { payload: 'a "quoted"\n' })))).toEqual({ d: 'a "quoted"\n' });
  });
});

describe('headerValue (header injection)', () => {
  it.each([
    ['CRLF from a placeholder', 'Bearer {{.payload}}', { payload: 'x\r\nX-Evil: 1' }, 'Bearer xX-Evil: 1'],
    ['a lone LF', '{{.payload}}', { payload: 'a\nb' }, 'ab'],
    ['a lone CR', '{{.payload}}', { payload: 'a\rb' }, 'ab'],
    ['NUL and other controls', '{{.payload}}', { payload: 'a\u0000b\u0007c\u007f' }, 'abc'],
    ['CRLF in the template itself', 'a\r\nb', {}, 'ab'],
  ])('strips %s', (_what, template, v, expected) => {
    const out = headerValue(template, v);
    expect(out).toBe(expected);
    expect(out).not.toMatch(/[\r\n]/);
  });
  it('keeps tabs and ordinary text', () => expect(headerValue('a\tb {{.topic}}', vars)).toBe('a\tb orders/eu'));
});

describe('cutResponse', () => {
  it('keeps short bodies whole', () => expect(cutResponse('pong')).toBe('pong'));
  it(`cuts at ${MAX_RESPONSE_BYTES} bytes of UTF-8 without splitting a character`, () => {
    expect(Buffer.byteLength(cutResponse('x'.repeat(10000)))).toBe(MAX_RESPONSE_BYTES);
    const cut = cutResponse(`a${'é'.repeat(3000)}`);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(MAX_RESPONSE_BYTES);
    expect(cut).not.toContain('\uFFFD');
  });
});
