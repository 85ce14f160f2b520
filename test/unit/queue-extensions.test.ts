/**
 * Delayed delivery and ordered queues (extensions), the pure parts: request validation of
 * `delay_seconds`, the FIFO message group and deduplication ids, FIFO queue names within SQS's
 * 80 characters, and what SQS is sent per message.
 */
import { batchSchema, messageSchema, MAX_DELAY_SECONDS, type PublishedMessage } from '../../lambda/core/rules/message';
import { deduplicationId, fifoGroupId, fifoQueueName, SQS_MAX_QUEUE_NAME } from '../../lambda/core/rules/ordering';
import { parse } from '../../lambda/core/rules/validation';
import { buildSendBatches } from '../../lambda/core/adapters/sqs';
import { outgoing } from '../../lambda/queues/sink';
import { sqsQueuePrefix } from '../../lib/stack-outputs';
import { newId } from '../../lambda/core/rules/clock';
import { handBack, heldBehind, holdBehind, newCollected, type Received } from '../../lambda/queues/leftovers';
import type { QueueItem } from '../../lambda/queues/storage/queues';
import { refusal } from '../fixtures/errors';

describe('delay_seconds on publish', () => {
  it(`accepts 0 and ${MAX_DELAY_SECONDS} on a message and on batch items, and leaves it out when absent`, () => {
    expect(parse(messageSchema, { payload: 'p', delay_seconds: 0 }).delay_seconds).toBe(0);
    expect(parse(messageSchema, { payload: 'p', delay_seconds: 900 }).delay_seconds).toBe(900);
    expect(parse(messageSchema, { payload: 'p' })).not.toHaveProperty('delay_seconds');
    expect(parse(batchSchema, { messages: [{ payload: 'a', delay_seconds: 5 }, { payload: 'b' }] }).messages.map((m) => m.delay_seconds)).toEqual([5, undefined]);
  });

  it.each([-1, 365 * 24 * 3600 + 1])('answers 422 on delay_seconds for %i', (delay_seconds) => {
    expect(refusal(() => parse(messageSchema, { payload: 'p', delay_seconds }))).toMatchObject({ status: 422, code: 'VALIDATION_ERROR', details: { fields: [{ field: 'delay_seconds' }] } });
  });

  it('names the batch item whose delay is out of range', () => {
    expect(refusal(() => parse(batchSchema, { messages: [{ payload: 'a' }, { payload: 'b', delay_seconds: 365 * 24 * 3600 + 1 }] }))).toMatchObject({
      status: 422,
      details: { fields: [{ field: 'messages.1.delay_seconds' }] },
    });
  });

  it.each([['a string', '5'], ['a fraction', 1.5], ['a boolean', true], ['null', null]])('answers 400 for %s', (_label, delay_seconds) => {
    expect(refusal(() => parse(messageSchema, { payload: 'p', delay_seconds }))).toMatchObject({ status: 400, code: 'INVALID_REQUEST' });
  });
});

describe('FIFO ids', () => {
  const scope = { namespace: 'acme', topic: 'orders', key: 'charge-1' };

  it('gives a retried publish the same deduplication ids, item by item, and another key or topic others', () => {
    const a = [0, 1].map((i) => deduplicationId(scope, i, newId()));
    expect([0, 1].map((i) => deduplicationId(scope, i, newId()))).toEqual(a);
    expect(a[0]).not.toBe(a[1]);
    expect(deduplicationId({ ...scope, key: 'charge-2' }, 0, 'x')).not.toBe(a[0]);
    expect(deduplicationId({ ...scope, topic: 'orders2' }, 0, 'x')).not.toBe(a[0]);
    expect(deduplicationId({ ...scope, namespace: 'acme2' }, 0, 'x')).not.toBe(a[0]);
  });

  it('uses the message id when the publish has no Idempotency-Key, so nothing is ever deduplicated', () => {
    expect(deduplicationId(undefined, 0, 'M1')).toBe('M1');
  });

  it('groups by partition key; a message without one is a group of its own, stable across a retry', () => {
    expect(fifoGroupId('customer-7', 'd1')).toBe(fifoGroupId('customer-7', 'd2'));
    expect(fifoGroupId('customer-7', 'd1')).not.toBe(fifoGroupId('customer-8', 'd1'));
    expect(fifoGroupId(undefined, 'd1')).toBe(fifoGroupId(undefined, 'd1'));
    expect(fifoGroupId(undefined, 'd1')).not.toBe(fifoGroupId(undefined, 'd2'));
    expect(fifoGroupId(undefined, 'd1')).not.toBe(fifoGroupId('d1', 'd1'));
  });

  it('keeps both ids within SQS\'s rules (at most 128 ASCII characters) whatever the key', () => {
    for (const id of [fifoGroupId('é😀'.repeat(128), 'x'), fifoGroupId(undefined, 'x'), deduplicationId(scope, 99, 'x')]) {
      expect(id).toMatch(/^[0-9a-f]{64}$/);
    }
  });
});

describe('FIFO queue names', () => {
  it.each(['MessagingService', 'MessagingService-dev', `MessagingService-${'e'.repeat(30)}`, `MessagingService-${'e'.repeat(32)}`, 'x'.repeat(48)])(
    'stay within 80 characters and under the stack prefix for the stack %s',
    (stack) => {
      const prefix = sqsQueuePrefix(stack);
      const a = fifoQueueName(prefix, newId(0));
      const b = fifoQueueName(prefix, newId(0));
      expect(a.length).toBeLessThanOrEqual(SQS_MAX_QUEUE_NAME);
      expect(a.startsWith(prefix)).toBe(true);
      expect(a.endsWith('.fifo')).toBe(true);
      expect(a).not.toBe(b);
    },
  );

  it('keeps the whole id when it fits', () => {
    const id = newId();
    expect(fifoQueueName('MessagingService_q_', id)).toBe(`MessagingService_q_${id}.fifo`);
  });
});

describe('what the queue sink sends', () => {
  const m = (partition_key?: string): PublishedMessage => ({
    message_id: newId(),
    topic: 't',
    payload: 'p',
    content_type: 'text/plain',
    properties: {},
    ...(partition_key ? { partition_key } : {}),
    published_at: 0,
    size: 1,
  });

  it('sends a standard queue the publisher\'s delay, and nothing extra without one (the queue default applies)', () => {
    const ms = [m(), m(), m()];
    const out = outgoing(['a', 'b', 'c'], ms, [{ delaySeconds: 5, dedupId: 'd0' }, { dedupId: 'd1' }, { delaySeconds: 0, dedupId: 'd2' }], false);
    expect(out).toEqual([{ body: 'a', delaySeconds: 5 }, 'b', { body: 'c', delaySeconds: 0 }]);
    const [cmd] = buildSendBatches('https://sqs/q', out);
    expect(cmd.input.Entries).toEqual([
      { Id: '0', MessageBody: 'a', DelaySeconds: 5 },
      { Id: '1', MessageBody: 'b' },
      { Id: '2', MessageBody: 'c', DelaySeconds: 0 },
    ]);
  });

  it('sends an ordered queue a group and a deduplication id, and never a per-message delay', () => {
    const ms = [m('k1'), m()];
    const out = outgoing(['a', 'b'], ms, [{ delaySeconds: 5, dedupId: 'd0' }, { dedupId: 'd1' }], true);
    expect(out).toEqual([
      { body: 'a', groupId: fifoGroupId('k1', 'd0'), dedupId: 'd0' },
      { body: 'b', groupId: fifoGroupId(undefined, 'd1'), dedupId: 'd1' },
    ]);
    const [cmd] = buildSendBatches('https://sqs/q.fifo', out);
    expect(cmd.input.Entries?.[0]).toEqual({ Id: '0', MessageBody: 'a', MessageGroupId: fifoGroupId('k1', 'd0'), MessageDeduplicationId: 'd0' });
  });

  it('deduplicates the service\'s own republishing by message id', () => {
    const ms = [m('k')];
    expect(outgoing(['a'], ms, undefined, true)).toEqual([{ body: 'a', groupId: fifoGroupId('k', ms[0].message_id), dedupId: ms[0].message_id }]);
  });
});

describe('consume leftovers of an ordered queue', () => {
  const queue = (ordering?: 'fifo') => ({ id: 'Q', ordering }) as unknown as QueueItem;
  const rec = (id: string, partition_key?: string): Received => ({
    body: '',
    handle: `h-${id}`,
    receiveCount: 1,
    message: { message_id: id, topic: 't', payload: id, content_type: 'text/plain', properties: {}, ...(partition_key ? { partition_key } : {}), published_at: 0, size: 1 },
  });
  const take = (c: ReturnType<typeof newCollected>, r: Received) => {
    c.out.push({ message_id: r.message.message_id } as never);
    c.taken.push(r);
    c.showAgain.push(r.handle);
  };

  it('hands back the later messages of a key once one of it went back, and only on an ordered queue', () => {
    const c = newCollected();
    handBack(queue('fifo'), rec('a2', 'a'), c);
    expect(heldBehind(queue('fifo'), rec('a3', 'a'), c)).toBe(true);
    expect(heldBehind(queue('fifo'), rec('b1', 'b'), c)).toBe(false);
    expect(heldBehind(queue('fifo'), rec('n1'), c)).toBe(false); // no key: no order to keep

    const plain = newCollected();
    handBack(queue(), rec('a2', 'a'), plain);
    expect(heldBehind(queue(), rec('a3', 'a'), plain)).toBe(false);
  });

  it('takes the returned messages of a key whose earlier message could not be dead-lettered out of the answer', () => {
    const c = newCollected();
    take(c, rec('a2', 'a'));
    take(c, rec('b1', 'b'));
    take(c, rec('n1'));
    holdBehind(queue('fifo'), [rec('a1', 'a'), rec('n0')], c);
    expect(c.out.map((m) => m.message_id)).toEqual(['b1', 'n1']);
    expect(c.taken.map((r) => r.message.message_id)).toEqual(['b1', 'n1']);
    expect(c.handBack.map((r) => r.message.message_id)).toEqual(['a2']);
    expect(c.showAgain).toEqual(['h-b1', 'h-n1']);
    expect(heldBehind(queue('fifo'), rec('a3', 'a'), c)).toBe(true);

    const plain = newCollected();
    take(plain, rec('a2', 'a'));
    holdBehind(queue(), [rec('a1', 'a')], plain);
    expect(plain.out).toHaveLength(1);
  });
});
