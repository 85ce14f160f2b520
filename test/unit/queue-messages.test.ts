import { decodeQueueBody, encodeQueueBody, isPastTtl, sqsJson, SQS_BODY_LIMIT_BYTES } from '../../lambda/core/rules/queue-messages';
import { deadLetterInput } from '../../lambda/publishing/rules';
import { MAX_PAYLOAD_BYTES, type PublishedMessage } from '../../lambda/core/rules/message';
import { MAX_RESPONSE_MESSAGE_BYTES, responseBytes } from '../../lambda/core/rules/response-budget';

const message = (payload: string, properties: Record<string, string> = {}): PublishedMessage => ({
  message_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV',
  topic: 'orders/eu',
  payload,
  content_type: 'application/json',
  properties,
  published_at: 1_800_000_000_000,
  size: Buffer.byteLength(payload),
});

/** SQS's allowed body characters (#x9 #xA #xD #x20-#xD7FF #xE000-#xFFFD #x10000-#x10FFFF); ASCII is within them everywhere. */
const sqsAscii = /^[\x09\x0a\x0d\x20-\x7e]*$/;

describe('queue message bodies', () => {
  it.each([
    ['plain JSON', '{"id":42}'],
    ['astral and accented characters', 'héllo wörld 😀 日本'],
    ['control characters and lone surrogates', '\u0000\u0001\u001f\ud800x\udfff'],
    ['quotes and backslashes', '"\\"\\\\'],
  ])('round-trip %s exactly, in ASCII only', (_, payload) => {
    const m = message(payload, { k: 'ü' });
    const body = encodeQueueBody(m);
    expect(body).toMatch(sqsAscii);
    expect(decodeQueueBody(body)).toEqual(m);
  });

  it('always fit SQS at 256 KiB, the worst escaping case carrying its payload as base64', () => {
    for (const unit of ['\u0001', '😀', 'é', '"', 'x']) {
      let payload = unit.repeat(Math.floor(MAX_PAYLOAD_BYTES / Buffer.byteLength(unit)));
      payload += 'x'.repeat(MAX_PAYLOAD_BYTES - Buffer.byteLength(payload));
      const m = message(payload, { a: 'b'.repeat(1000) });
      const body = encodeQueueBody(m);
      expect(Buffer.byteLength(body)).toBeLessThanOrEqual(SQS_BODY_LIMIT_BYTES);
      expect(decodeQueueBody(body)).toEqual(m);
    }
    expect(encodeQueueBody(message('\u0001'.repeat(MAX_PAYLOAD_BYTES)))).toContain('"payload_b64"');
  });

  it('are refused when they are not messages of the service', () => {
    for (const body of ['', 'not json', '[]', 'null', '{"payload":"x"}', '{"message_id":"M","published_at":1}']) expect(decodeQueueBody(body)).toBeUndefined();
  });

  it('sqsJson parses back to the same value', () => {
    const v = { a: 'é😀\u0007', b: [1, null, true], c: { d: '\ud800' } };
    expect(JSON.parse(sqsJson(v))).toEqual(v);
  });
});

describe('message TTL', () => {
  it('ends exactly message_ttl_seconds after the publish', () => {
    expect(isPastTtl(1000, 1, 1999)).toBe(false);
    expect(isPastTtl(1000, 1, 2000)).toBe(true);
  });
});

describe('dead-letter input', () => {
  it('keeps payload, content type, properties and partition key, adds the extras and counts one hop', () => {
    const m = { ...message('poison', { order: '7' }), partition_key: 'k' };
    expect(deadLetterInput(m, { dlq_source_queue: 'orders', dlq_receive_count: '4' })).toEqual({
      payload: 'poison',
      content_type: 'application/json',
      properties: { order: '7', dlq_source_queue: 'orders', dlq_receive_count: '4', 'x-hop': '1' },
      partition_key: 'k',
    });
    expect(deadLetterInput(message('p', { 'x-hop': '4' }), {})?.properties?.['x-hop']).toBe('5');
  });

  it('drops a message that already made 5 hops', () => {
    expect(deadLetterInput(message('p', { 'x-hop': '5' }), {})).toBeUndefined();
  });
});

describe('response size', () => {
  it('counts the bytes of a value escaped twice, as in a Lambda proxy response', () => {
    expect(responseBytes('ab')).toBe(JSON.stringify(JSON.stringify('ab')).length - 2);
    expect(responseBytes({ p: '"' })).toBe(Buffer.byteLength(JSON.stringify(JSON.stringify({ p: '"' }))) - 2);
    // A 256 KiB payload of control characters takes 7 bytes each: at most 2 such messages fit.
    const worst = responseBytes({ payload: '\u0001'.repeat(MAX_PAYLOAD_BYTES) });
    expect(worst).toBeGreaterThan(7 * MAX_PAYLOAD_BYTES);
    expect(Math.floor(MAX_RESPONSE_MESSAGE_BYTES / worst)).toBe(2);
  });
});
