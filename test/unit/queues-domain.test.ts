import {
  ackSchema,
  batchAckSchema,
  consumeAnswerDeadline,
  CONSUME_ANSWER_MS,
  consumeSchema,
  CONSUME_DEFAULTS,
  createQueueSchema,
  mayDeliverAgain,
  QUEUE_DEFAULTS,
  topicFilterField,
} from '../../lambda/queues/rules/queues';
import { parse } from '../../lambda/core/rules/validation';
import * as z from 'zod/mini';
import { refusal } from '../fixtures/errors';


const base = { name: 'orders', topic_filter: 'orders/#' };

describe('create queue schema', () => {
  it('fills the documented defaults: 1024 MB, 86400 s, 3 retries, no dead-letter topic, no delay, no ordering', () => {
    const defaults = { max_size_mb: 1024, message_ttl_seconds: 86400, max_retries: 3, delay_seconds: 0, ordering: 'none' };
    expect(parse(createQueueSchema, base)).toEqual({ ...base, ...defaults });
    expect(QUEUE_DEFAULTS).toEqual(defaults);
  });

  it.each([
    ['max_size_mb', 1, 102400],
    ['message_ttl_seconds', 1, 1209600],
    ['max_retries', 0, 1000],
    ['delay_seconds', 0, 900],
  ])('accepts %s at both ends of %i..%i and answers 422 just outside', (field, min, max) => {
    expect(parse(createQueueSchema, { ...base, [field]: min })[field as 'max_retries']).toBe(min);
    expect(parse(createQueueSchema, { ...base, [field]: max })[field as 'max_retries']).toBe(max);
    for (const v of [min - 1, max + 1]) {
      expect(refusal(() => parse(createQueueSchema, { ...base, [field]: v }))).toMatchObject({
        status: 422,
        code: 'VALIDATION_ERROR',
        details: { fields: [{ field }] },
      });
    }
  });

  it.each([
    ['a string number', 'max_size_mb', '5'],
    ['a fraction', 'message_ttl_seconds', 1.5],
    ['a boolean', 'max_retries', true],
    ['null', 'max_retries', null],
    ['a string delay', 'delay_seconds', '5'],
    ['a fractional delay', 'delay_seconds', 0.5],
    ['a number as ordering', 'ordering', 1],
    ['null as ordering', 'ordering', null],
  ])('answers 400 INVALID_REQUEST for %s', (_label, field, value) => {
    expect(refusal(() => parse(createQueueSchema, { ...base, [field]: value }))).toMatchObject({ status: 400, code: 'INVALID_REQUEST' });
  });

  it.each([
    ['name', { topic_filter: 'a/#' }],
    ['topic_filter', { name: 'q' }],
  ])('answers 422 naming %s when it is missing', (field, body) => {
    expect(refusal(() => parse(createQueueSchema, body))).toMatchObject({ status: 422, details: { fields: [{ field, message: 'is required' }] } });
  });

  it.each(['-leading-dash', 'has space', 'slash/inside', '', 'x'.repeat(129)])('answers 422 for the name %j', (name) => {
    expect(refusal(() => parse(createQueueSchema, { ...base, name }))).toMatchObject({ status: 422, details: { fields: [{ field: 'name' }] } });
  });

  it.each(['a', 'A.b_c-9', '0', 'x'.repeat(128)])('accepts the name %j', (name) => {
    expect(parse(createQueueSchema, { ...base, name }).name).toBe(name);
  });

  it.each(['a/#/b', 'a/b#', 'a+', 'a//b', '', '/a', 'a/\u0000'])('answers 400 INVALID_TOPIC_FILTER for the filter %j', (topic_filter) => {
    const e = refusal(() => parse(createQueueSchema, { ...base, topic_filter }));
    expect(e).toMatchObject({ status: 400, code: 'INVALID_TOPIC_FILTER', details: { field: 'topic_filter' } });
    expect(e.message).toContain('orders/#');
  });

  it('answers 400 INVALID_REQUEST (not INVALID_TOPIC_FILTER) when topic_filter is not a string', () => {
    expect(refusal(() => parse(createQueueSchema, { ...base, topic_filter: 7 }))).toMatchObject({ status: 400, code: 'INVALID_REQUEST' });
  });

  it('takes ordering "fifo" or "none" and answers 422 on ordering for any other string', () => {
    expect(parse(createQueueSchema, { ...base, ordering: 'fifo' }).ordering).toBe('fifo');
    expect(parse(createQueueSchema, { ...base, ordering: 'none' }).ordering).toBe('none');
    for (const ordering of ['FIFO', 'lifo', '']) {
      expect(refusal(() => parse(createQueueSchema, { ...base, ordering }))).toMatchObject({ status: 422, code: 'VALIDATION_ERROR', details: { fields: [{ field: 'ordering' }] } });
    }
  });

  it('keeps a valid dead_letter_topic', () => {
    expect(parse(createQueueSchema, { ...base, dead_letter_topic: 'orders/dead' }).dead_letter_topic).toBe('orders/dead');
  });

  it.each(['orders/#', 'orders/+/x', 'a//b', '/a', ''])('answers 422 for the dead_letter_topic %j (a topic name, not a filter)', (dead_letter_topic) => {
    expect(refusal(() => parse(createQueueSchema, { ...base, dead_letter_topic }))).toMatchObject({
      status: 422,
      code: 'VALIDATION_ERROR',
      details: { fields: [{ field: 'dead_letter_topic' }] },
    });
  });
});

describe('topicFilterField', () => {
  const schema = z.object({ topic_filter: topicFilterField() });

  it('passes a valid filter through', () => {
    expect(parse(schema, { topic_filter: '+/x/#' })).toEqual({ topic_filter: '+/x/#' });
  });

  it('answers 400 INVALID_TOPIC_FILTER with the reason in the message', () => {
    const e = refusal(() => parse(schema, { topic_filter: 'a/#/b' }));
    expect(e).toMatchObject({ status: 400, code: 'INVALID_TOPIC_FILTER' });
    expect(e.message).toMatch(/# must be a whole level and the last one/);
  });
});

describe('consume schema', () => {
  it('fills the documented defaults: 1 message, 30 s long poll, 300 s visibility', () => {
    expect(parse(consumeSchema, {})).toEqual({ max_messages: 1, timeout_seconds: 30, visibility_timeout_seconds: 300 });
    expect(CONSUME_DEFAULTS).toEqual({ max_messages: 1, timeout_seconds: 30, visibility_timeout_seconds: 300 });
  });

  it.each([
    ['max_messages', 1, 100],
    ['timeout_seconds', 0, 30],
    ['visibility_timeout_seconds', 0, 43200],
  ])('accepts %s at %i and %i and answers 422 just outside', (field, min, max) => {
    expect(parse(consumeSchema, { [field]: min })[field as 'max_messages']).toBe(min);
    expect(parse(consumeSchema, { [field]: max })[field as 'max_messages']).toBe(max);
    for (const v of [min - 1, max + 1]) {
      expect(refusal(() => parse(consumeSchema, { [field]: v }))).toMatchObject({ status: 422, details: { fields: [{ field }] } });
    }
  });

  it('answers 400 for a max_messages given as a string', () => {
    expect(refusal(() => parse(consumeSchema, { max_messages: '10' })).status).toBe(400);
  });

  it('accepts a consumer_id that is a resource name and answers 422 for one that is not', () => {
    expect(parse(consumeSchema, { consumer_id: 'worker-1' }).consumer_id).toBe('worker-1');
    expect(refusal(() => parse(consumeSchema, { consumer_id: 'worker 1' }))).toMatchObject({ status: 422, details: { fields: [{ field: 'consumer_id' }] } });
  });
});

describe('ack schemas', () => {
  it('requires a non-empty receipt_handle string', () => {
    expect(parse(ackSchema, { receipt_handle: 'h' })).toEqual({ receipt_handle: 'h' });
    expect(refusal(() => parse(ackSchema, {}))).toMatchObject({ status: 422, details: { fields: [{ field: 'receipt_handle', message: 'is required' }] } });
    expect(refusal(() => parse(ackSchema, { receipt_handle: '' })).status).toBe(422);
    expect(refusal(() => parse(ackSchema, { receipt_handle: 5 })).status).toBe(400);
  });

  const entry = { message_id: 'm', receipt_handle: 'h' };

  it('accepts 1 to 100 entries', () => {
    expect(parse(batchAckSchema, { entries: [entry] }).entries).toHaveLength(1);
    expect(parse(batchAckSchema, { entries: Array(100).fill(entry) }).entries).toHaveLength(100);
  });

  it.each([
    ['no entries', { entries: [] }, 422],
    ['101 entries', { entries: Array(101).fill({ message_id: 'm', receipt_handle: 'h' }) }, 422],
    ['entries missing', {}, 422],
    ['an entry without a handle', { entries: [{ message_id: 'm' }] }, 422],
    ['entries that is an object', { entries: { message_id: 'm', receipt_handle: 'h' } }, 400],
    ['an entry that is a string', { entries: ['m'] }, 400],
    ['a numeric message_id', { entries: [{ message_id: 1, receipt_handle: 'h' }] }, 400],
  ])('refuses the whole request with %s', (_label, body, status) => {
    expect(refusal(() => parse(batchAckSchema, body)).status).toBe(status);
  });
});

describe('mayDeliverAgain', () => {
  it.each([
    [0, 0, true],
    [1, 0, false],
    [0, 3, true],
    [3, 3, true],
    [4, 3, false],
    [2, 2, true],
    [3, 2, false],
    [1000, 1000, true],
    [1001, 1000, false],
  ])('after %i receives with max_retries %i: %s (at most 1 + max_retries deliveries)', (received, maxRetries, again) => {
    expect(mayDeliverAgain(received, maxRetries)).toBe(again);
  });
});

describe('a consume request\'s answer deadline', () => {
  it.each([
    [undefined, 1_000 + CONSUME_ANSWER_MS], // locally: the answer time alone
    [60_000, 1_000 + CONSUME_ANSWER_MS], // an invocation with time to spare
    [10_000, 1_000 + 10_000 - 1_500], // an invocation ending sooner: its end, less the margin to answer
  ])('with %p ms left in the invocation is %p', (remaining, want) => {
    expect(consumeAnswerDeadline(1_000, remaining)).toBe(want);
  });
});
