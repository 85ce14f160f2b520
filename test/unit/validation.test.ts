import { ApiError } from '../../lambda/core/rules/errors';
import { intIn, parse, parsePaging, resourceName, withApiError } from '../../lambda/core/rules/validation';
import * as z from 'zod/mini';
import { refusal } from '../fixtures/errors';
import { batchAckSchema, consumeSchema } from '../../lambda/queues/rules/queues';
import { webhookSchema } from '../../lambda/webhooks/rules/webhooks';

const schema = z.object({
  name: resourceName(),
  max: z.optional(intIn(1, 100)),
  tags: z.optional(z.array(z.string())),
  options: z.optional(z.object({ depth: intIn(0, 5) })),
});

describe('parse', () => {
  it('returns the parsed value and drops unknown fields', () => {
    expect(parse(schema, { name: 'q-1', max: 5, extra: true })).toEqual({ name: 'q-1', max: 5 });
  });

  it.each([
    ['a field of the wrong type', { name: 123 }, 'name'],
    ['a string where an integer belongs', { name: 'q', max: '5' }, 'max'],
    ['a fractional number where an integer belongs', { name: 'q', max: 1.5 }, 'max'],
    ['an array item of the wrong type', { name: 'q', tags: ['a', 1] }, 'tags.1'],
    ['a nested field of the wrong type', { name: 'q', options: { depth: 'deep' } }, 'options.depth'],
  ])('answers 400 INVALID_REQUEST naming the field for %s', (_label, input, field) => {
    const e = refusal(() => parse(schema, input));
    expect({ status: e.status, code: e.code }).toEqual({ status: 400, code: 'INVALID_REQUEST' });
    expect(e.details.fields).toEqual([expect.objectContaining({ field })]);
    expect(e.message).toContain(field);
  });

  it.each([[null], [[1, 2]], ['text'], [42], [undefined]])('answers 400 INVALID_REQUEST for the body %j, which is not an object', (body) => {
    expect(refusal(() => parse(schema, body))).toMatchObject({ status: 400, code: 'INVALID_REQUEST' });
  });

  it('answers 422 VALIDATION_ERROR for a missing required field', () => {
    const e = refusal(() => parse(schema, {}));
    expect({ status: e.status, code: e.code }).toEqual({ status: 422, code: 'VALIDATION_ERROR' });
    expect(e.details).toEqual({ fields: [{ field: 'name', message: 'is required' }] });
  });

  it.each([
    ['above the range', { name: 'q', max: 101 }, 'max'],
    ['below the range', { name: 'q', max: 0 }, 'max'],
    ['a nested value out of range', { name: 'q', options: { depth: 6 } }, 'options.depth'],
    ['a malformed name', { name: 'bad name!' }, 'name'],
    ['a name starting with a dot', { name: '.q' }, 'name'],
    ['a name of 129 characters', { name: 'q'.repeat(129) }, 'name'],
  ])('answers 422 VALIDATION_ERROR with details.fields for %s', (_label, input, field) => {
    const e = refusal(() => parse(schema, input));
    expect({ status: e.status, code: e.code }).toEqual({ status: 422, code: 'VALIDATION_ERROR' });
    expect(e.details.fields).toEqual([{ field, message: expect.any(String) }]);
  });

  it('accepts the range bounds and a name of 128 characters', () => {
    expect(parse(schema, { name: 'Q'.repeat(128), max: 100 }).max).toBe(100);
    expect(parse(schema, { name: '0._-a', max: 1 }).name).toBe('0._-a');
  });

  it('names every invalid field, missing ones first', () => {
    const e = refusal(() => parse(z.object({ name: resourceName(), max: intIn(1, 100) }), { max: 101 }));
    expect((e.details.fields as { field: string }[]).map((f) => f.field)).toEqual(['name', 'max']);
  });

  it('throws the API error a refinement names instead of a 422', () => {
    const custom = new ApiError(400, 'INVALID_TOPIC_FILTER', 'bad filter');
    const filter = z.object({ f: z.string().check(z.refine((s) => !s.includes('#x'), withApiError(custom))) });
    expect(refusal(() => parse(filter, { f: 'a/#x' }))).toBe(custom);
  });
});

// zod/mini ships without a locale (every issue would read "Invalid input"); validation.ts loads
// the English one. These messages are part of the API's answers, so they are pinned here.
describe('field messages', () => {
  it.each([
    ['a number over its maximum', consumeSchema, { max_messages: 101 }, 422, 'max_messages', 'Too big: expected number to be <=100'],
    ['a string where a number belongs', consumeSchema, { max_messages: '5' }, 400, 'max_messages', 'Invalid input: expected number, received string'],
    ['an empty array', batchAckSchema, { entries: [] }, 422, 'entries', 'Too small: expected array to have >=1 items'],
    ['a value outside an enum', webhookSchema, { name: 'w', url: 'https://e.example/', topic_filter: '#', method: 'GET' }, 422, 'method', 'Invalid option: expected one of "POST"|"PUT"|"PATCH"'],
  ] as const)('reads in English for %s', (_what, schema, input, status, field, message) => {
    expect(refusal(() => parse(schema, input))).toMatchObject({ status, details: { fields: [{ field, message }] } });
  });
});

describe('parsePaging', () => {
  it.each([[undefined], [null], [{}]])('defaults to limit 50 and offset 0 for %j', (query) => {
    expect(parsePaging(query)).toEqual({ limit: 50, offset: 0 });
  });

  it('accepts limit 1 to 100 and any offset from 0', () => {
    expect(parsePaging({ limit: '1', offset: '0' })).toEqual({ limit: 1, offset: 0 });
    expect(parsePaging({ limit: '100', offset: '250' })).toEqual({ limit: 100, offset: 250 });
  });

  it.each([
    [{ limit: '0' }, 'limit'],
    [{ limit: '101' }, 'limit'],
    [{ limit: '-5' }, 'limit'],
    [{ offset: '-1' }, 'offset'],
  ])('answers 422 VALIDATION_ERROR for the out-of-range %j', (query, field) => {
    const e = refusal(() => parsePaging(query));
    expect({ status: e.status, code: e.code }).toEqual({ status: 422, code: 'VALIDATION_ERROR' });
    expect(e.details.fields).toEqual([{ field, message: expect.any(String) }]);
  });

  it.each([[{ limit: 'ten' }], [{ limit: '1.5' }], [{ limit: '' }], [{ offset: '2e3' }], [{ offset: ' 1' }]])(
    'answers 400 INVALID_REQUEST for the non-integer %j',
    (query) => {
      expect(refusal(() => parsePaging(query))).toMatchObject({ status: 400, code: 'INVALID_REQUEST' });
    },
  );
});
