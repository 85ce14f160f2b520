import {
  addressed,
  APPLICATION_PROPERTY,
  assertMessageSize,
  assertPayloadSize,
  batchSchema,
  hopCount,
  MAX_BATCH_MESSAGES,
  MAX_PAYLOAD_BYTES,
  MAX_PROPERTIES,
  MAX_PROPERTIES_BYTES,
  MAX_PROPERTY_KEY_CHARS,
  messageSchema,
  utf8Bytes,
} from '../../lambda/core/rules/message';
import { ApiError } from '../../lambda/core/rules/errors';
import { parse } from '../../lambda/core/rules/validation';
import { refusal } from '../fixtures/errors';


describe('message schema', () => {
  it('accepts a payload alone and leaves the defaults to publish', () => {
    expect(parse(messageSchema, { payload: 'hi' })).toEqual({ payload: 'hi' });
  });

  it('accepts every optional field and ignores unknown ones', () => {
    const m = parse(messageSchema, {
      payload: '{"a":1}',
      content_type: 'application/vnd.acme+json; charset=utf-8',
      properties: { region: 'eu', n: '5' },
      partition_key: 'customer-42',
      color: 'blue',
    });
    expect(m).toEqual({
      payload: '{"a":1}',
      content_type: 'application/vnd.acme+json; charset=utf-8',
      properties: { region: 'eu', n: '5' },
      partition_key: 'customer-42',
    });
  });

  it('accepts an empty payload string', () => {
    expect(parse(messageSchema, { payload: '' }).payload).toBe('');
  });

  it('answers 422 naming payload when it is missing', () => {
    const e = refusal(() => parse(messageSchema, { properties: {} }));
    expect(e).toMatchObject({ status: 422, code: 'VALIDATION_ERROR', details: { fields: [{ field: 'payload', message: 'is required' }] } });
  });

  it.each([
    ['a number', 42],
    ['an object', { a: 1 }],
    ['null', null],
    ['an array', ['a']],
  ])('answers 400 INVALID_REQUEST when payload is %s', (_label, payload) => {
    expect(refusal(() => parse(messageSchema, { payload }))).toMatchObject({ status: 400, code: 'INVALID_REQUEST' });
  });

  it.each([
    ['a number value', { n: 5 }],
    ['a boolean value', { ok: true }],
    ['a null value', { x: null }],
    ['a nested object', { x: { y: 'z' } }],
  ])('answers 400 INVALID_REQUEST when properties has %s (values must be strings)', (_label, properties) => {
    const e = refusal(() => parse(messageSchema, { payload: 'p', properties }));
    expect(e).toMatchObject({ status: 400, code: 'INVALID_REQUEST' });
    expect((e.details.fields as { field: string }[])[0].field).toMatch(/^properties\./);
  });

  it.each([['a string', 'a=b'], ['an array', ['a']]])('answers 400 when properties is %s', (_label, properties) => {
    expect(refusal(() => parse(messageSchema, { payload: 'p', properties })).status).toBe(400);
  });

  it.each(['text/plain', 'application/json', 'application/octet-stream', 'application/vnd.api+json', 'text/plain; charset=utf-8', 'image/svg+xml'])(
    'accepts content_type %s',
    (content_type) => {
      expect(parse(messageSchema, { payload: 'p', content_type }).content_type).toBe(content_type);
    },
  );

  it.each(['', 'json', 'text/', '/plain', 'text plain', 'a/b/c', 'x'.repeat(250) + '/plain'])('answers 422 for content_type %j', (content_type) => {
    const e = refusal(() => parse(messageSchema, { payload: 'p', content_type }));
    expect(e).toMatchObject({ status: 422, code: 'VALIDATION_ERROR' });
    expect((e.details.fields as { field: string }[]).map((f) => f.field)).toContain('content_type');
  });

  it('answers 400 when content_type is not a string', () => {
    expect(refusal(() => parse(messageSchema, { payload: 'p', content_type: 1 })).status).toBe(400);
  });

  it('accepts a partition_key of 1 to 256 characters', () => {
    expect(parse(messageSchema, { payload: 'p', partition_key: 'k' }).partition_key).toBe('k');
    expect(parse(messageSchema, { payload: 'p', partition_key: 'k'.repeat(256) }).partition_key).toHaveLength(256);
  });

  it.each([['empty', ''], ['257 characters', 'k'.repeat(257)]])('answers 422 for a partition_key that is %s', (_label, partition_key) => {
    expect(refusal(() => parse(messageSchema, { payload: 'p', partition_key }))).toMatchObject({
      status: 422,
      details: { fields: [{ field: 'partition_key' }] },
    });
  });

  it('answers 400 for a numeric partition_key', () => {
    expect(refusal(() => parse(messageSchema, { payload: 'p', partition_key: 7 })).status).toBe(400);
  });
});

describe('batch schema', () => {
  const item = { payload: 'p' };

  it(`accepts 1 and ${MAX_BATCH_MESSAGES} messages`, () => {
    expect(parse(batchSchema, { messages: [item] }).messages).toHaveLength(1);
    expect(parse(batchSchema, { messages: Array(MAX_BATCH_MESSAGES).fill(item) }).messages).toHaveLength(100);
  });

  it.each([
    ['no messages', []],
    ['101 messages', Array(101).fill({ payload: 'p' })],
  ])('answers 422 for %s', (_label, messages) => {
    expect(refusal(() => parse(batchSchema, { messages }))).toMatchObject({ status: 422, details: { fields: [{ field: 'messages' }] } });
  });

  it('answers 422 naming the field when messages is missing', () => {
    expect(refusal(() => parse(batchSchema, {}))).toMatchObject({ status: 422, details: { fields: [{ field: 'messages', message: 'is required' }] } });
  });

  it('answers 400 when messages is not an array', () => {
    expect(refusal(() => parse(batchSchema, { messages: { payload: 'p' } })).status).toBe(400);
  });

  it('names the item and field of a bad item', () => {
    const e = refusal(() => parse(batchSchema, { messages: [item, item, { content_type: 'text/plain' }] }));
    expect(e).toMatchObject({ status: 422, details: { fields: [{ field: 'messages.2.payload', message: 'is required' }] } });
  });
});

describe('assertPayloadSize', () => {
  it('is 256 KiB', () => {
    expect(MAX_PAYLOAD_BYTES).toBe(262144);
  });

  it('accepts exactly 256 KiB of ASCII', () => {
    expect(() => assertPayloadSize('x'.repeat(MAX_PAYLOAD_BYTES))).not.toThrow();
  });

  it('answers 413 MESSAGE_TOO_LARGE one byte over, with the size and limit', () => {
    const e = refusal(() => assertPayloadSize('x'.repeat(MAX_PAYLOAD_BYTES + 1)));
    expect(e).toMatchObject({ status: 413, code: 'MESSAGE_TOO_LARGE', details: { field: 'payload', size: 262145, limit: 262144 } });
  });

  it('counts UTF-8 bytes, not characters: two-byte characters fill the limit at half the length', () => {
    const full = 'é'.repeat(MAX_PAYLOAD_BYTES / 2);
    expect(full.length).toBe(131072);
    expect(() => assertPayloadSize(full)).not.toThrow();
    expect(refusal(() => assertPayloadSize(full + 'x')).details.size).toBe(262145);
  });

  it('counts a four-byte emoji (two UTF-16 units) as four bytes', () => {
    const full = '😀'.repeat(MAX_PAYLOAD_BYTES / 4);
    expect(() => assertPayloadSize(full)).not.toThrow();
    expect(() => assertPayloadSize(full + '😀')).toThrow(ApiError);
    expect(utf8Bytes('😀')).toBe(4);
  });

  it('names the batch item it refuses', () => {
    expect(refusal(() => assertPayloadSize('x'.repeat(MAX_PAYLOAD_BYTES + 1), 'messages.7.payload')).details.field).toBe('messages.7.payload');
  });
});

describe('properties limits', () => {
  const props = (n: number, value = 'v') => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, value]));
  const fields = (e: ApiError) => ((e.details.fields as { field: string }[]) ?? []).map((f) => f.field);

  it(`accepts ${MAX_PROPERTIES} entries and refuses one more with 422 on properties`, () => {
    expect(() => parse(messageSchema, { payload: 'p', properties: props(MAX_PROPERTIES) })).not.toThrow();
    const e = refusal(() => parse(messageSchema, { payload: 'p', properties: props(MAX_PROPERTIES + 1) }));
    expect([e.status, e.code, fields(e)]).toEqual([422, 'VALIDATION_ERROR', ['properties']]);
  });

  it(`refuses an empty key or one above ${MAX_PROPERTY_KEY_CHARS} characters with 422 naming it`, () => {
    expect(() => parse(messageSchema, { payload: 'p', properties: { ['k'.repeat(MAX_PROPERTY_KEY_CHARS)]: 'v' } })).not.toThrow();
    const long = 'k'.repeat(MAX_PROPERTY_KEY_CHARS + 1);
    expect(fields(refusal(() => parse(messageSchema, { payload: 'p', properties: { [long]: 'v' } })))).toEqual([`properties.${long}`]);
    expect(refusal(() => parse(messageSchema, { payload: 'p', properties: { '': 'v' } })).status).toBe(422);
  });

  it(`answers 413 above ${MAX_PROPERTIES_BYTES} bytes of keys and values in all, naming the item`, () => {
    const fits = { a: 'x'.repeat(MAX_PROPERTIES_BYTES - 1) };
    expect(() => assertMessageSize({ payload: 'p', properties: fits })).not.toThrow();
    const e = refusal(() => assertMessageSize({ payload: 'p', properties: { ab: 'é'.repeat(MAX_PROPERTIES_BYTES / 2) } }, 'messages.3'));
    expect([e.status, e.code, e.details.field]).toEqual([413, 'MESSAGE_TOO_LARGE', 'messages.3.properties']);
  });

  it('still refuses a payload above 256 KiB first', () => {
    expect(refusal(() => assertMessageSize({ payload: 'x'.repeat(MAX_PAYLOAD_BYTES + 1) })).details.field).toBe('payload');
  });
});

describe('hopCount', () => {
  it.each([
    [undefined, 0],
    [{}, 0],
    [{ other: '3' }, 0],
    [{ 'x-hop': '1' }, 1],
    [{ 'x-hop': '5' }, 5],
    [{ 'x-hop': '0' }, 0],
    [{ 'x-hop': '-2' }, 0],
    [{ 'x-hop': '1.5' }, 0],
    [{ 'x-hop': 'many' }, 0],
    [{ 'x-hop': '' }, 0],
  ])('reads %j as %i', (properties, hops) => {
    expect(hopCount(properties as Record<string, string> | undefined)).toBe(hops);
  });
});

describe('addressed (application-addressed messages)', () => {
  const fields = (e: ApiError) => ((e.details.fields as { field: string }[]) ?? []).map((f) => f.field);

  it('moves application into the x-application property and answers it', () => {
    expect(addressed({ payload: 'p', application: 'cust-1', properties: { k: 'v' } })).toEqual({
      message: { payload: 'p', properties: { k: 'v', [APPLICATION_PROPERTY]: 'cust-1' } },
      application: 'cust-1',
    });
  });

  it('leaves an unaddressed message as it is', () => expect(addressed({ payload: 'p' })).toEqual({ message: { payload: 'p' } }));

  it('takes the property given alone as the address (the endpoint then checks the application exists)', () => {
    expect(addressed({ payload: 'p', properties: { [APPLICATION_PROPERTY]: 'cust-2', k: 'v' } })).toEqual({ message: { payload: 'p', properties: { [APPLICATION_PROPERTY]: 'cust-2', k: 'v' } }, application: 'cust-2' });
  });

  it('refuses application and a property that disagree, naming the item, and accepts both when equal', () => {
    const e = refusal(() => addressed({ payload: 'p', application: 'a', properties: { [APPLICATION_PROPERTY]: 'b' } }, 'messages.1'));
    expect([e.status, e.code, fields(e)]).toEqual([422, 'VALIDATION_ERROR', ['messages.1.properties.x-application']]);
    expect(addressed({ payload: 'p', application: 'a', properties: { [APPLICATION_PROPERTY]: 'a' } }).application).toBe('a');
  });

  it('refuses a malformed application in the schema (422) and a non-string (400)', () => {
    expect(refusal(() => parse(messageSchema, { payload: 'p', application: '-x' })).status).toBe(422);
    expect(refusal(() => parse(messageSchema, { payload: 'p', application: 7 })).status).toBe(400);
  });
});
