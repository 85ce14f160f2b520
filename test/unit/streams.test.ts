import { commitSchema, createStreamSchema, fnv1a32, partitionFor, resolveStart, streamConsumeSchema } from '../../lambda/streams/rules';
import { createSubscriptionSchema, lastSeenRefreshMs, subscriptionConsumeSchema } from '../../lambda/subscriptions/rules';
import { parse } from '../../lambda/core/rules/validation';
import { ApiError } from '../../lambda/core/rules/errors';

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return { status: (e as ApiError).status, code: (e as ApiError).code, fields: ((e as ApiError).details.fields as { field: string }[] | undefined)?.map((f) => f.field) };
  }
  throw new Error('expected a refusal');
};

describe('partition hashing', () => {
  it.each([
    ['', 0x811c9dc5],
    ['a', 0xe40c292c],
    ['foobar', 0xbf9cf968],
  ])('computes the published FNV-1a 32-bit vector of %j', (s, h) => {
    expect(fnv1a32(s)).toBe(h);
  });

  it('maps a key to the same partition whatever the round-robin position', () => {
    const p = partitionFor('order-17', 8, 0);
    for (let rr = 0; rr < 20; rr++) expect(partitionFor('order-17', 8, rr)).toBe(p);
  });

  it('hashes UTF-8 bytes, so non-ASCII keys are stable', () => {
    expect(partitionFor('Zürich', 64, 0)).toBe(fnv1a32('Zürich') % 64);
  });

  it('spreads keyless messages round robin over every partition', () => {
    expect([0, 1, 2, 3, 4, 5].map((rr) => partitionFor(undefined, 3, rr))).toEqual([0, 1, 2, 0, 1, 2]);
  });

  it('puts everything in partition 0 of a one-partition stream', () => {
    expect(partitionFor('k', 1, 5)).toBe(0);
    expect(partitionFor(undefined, 1, 5)).toBe(0);
  });

  it('spreads many keys over all partitions', () => {
    const used = new Set(Array.from({ length: 200 }, (_, i) => partitionFor(`key-${i}`, 8, 0)));
    expect(used.size).toBe(8);
  });
});

describe('start offset resolution', () => {
  const bounds = { earliest: 5, latest: 20 };
  it.each([
    ['earliest', undefined, 5],
    ['latest', 9, 20],
    [12, 9, 12],
    [undefined, 9, 9],
    [undefined, undefined, 5],
    [2, undefined, 5], // below the oldest retained offset: those messages are gone
    [undefined, 3, 5],
  ] as const)('start_offset %j with commit %j starts at %j', (start, committed, want) => {
    expect(resolveStart(start, committed, bounds)).toBe(want);
  });
});

describe('stream schemas', () => {
  it('applies the defaults 7 days, 10 GB, 1 partition', () => {
    expect(parse(createStreamSchema, { name: 's', topic_filter: 'a/#' })).toMatchObject({ retention_days: 7, max_size_gb: 10, partition_count: 1 });
  });

  it.each([
    [{ partition_count: 0 }, 'partition_count'],
    [{ partition_count: 65 }, 'partition_count'],
    [{ retention_days: 366 }, 'retention_days'],
    [{ max_size_gb: 0 }, 'max_size_gb'],
    [{ name: 'bad name' }, 'name'],
  ])('refuses %j with 422 on the field', (extra, field) => {
    expect(refusal(() => parse(createStreamSchema, { name: 's', topic_filter: 'a/#', ...extra }))).toMatchObject({ status: 422, fields: [field] });
  });

  it('refuses a wrong type with 400 and a bad filter with 400 INVALID_TOPIC_FILTER', () => {
    expect(refusal(() => parse(createStreamSchema, { name: 's', topic_filter: 'a/#', partition_count: 'three' })).status).toBe(400);
    expect(refusal(() => parse(createStreamSchema, { name: 's', topic_filter: 'a/#/b' })).code).toBe('INVALID_TOPIC_FILTER');
  });

  it.each([
    ['earliest', 'earliest'],
    ['latest', 'latest'],
    [7, 7],
    ['7', 7],
    [0, 0],
  ])('accepts start_offset %j', (given, want) => {
    expect(parse(streamConsumeSchema, { consumer_group: 'g', start_offset: given }).start_offset).toBe(want);
  });

  it('refuses an unknown start_offset word and a negative offset with 422, a boolean with 400', () => {
    expect(refusal(() => parse(streamConsumeSchema, { consumer_group: 'g', start_offset: 'soonest' })).status).toBe(422);
    expect(refusal(() => parse(streamConsumeSchema, { consumer_group: 'g', start_offset: -1 })).status).toBe(422);
    expect(refusal(() => parse(streamConsumeSchema, { consumer_group: 'g', start_offset: true })).status).toBe(400);
  });

  it('requires consumer_group and caps max_messages at 1000 (default 100)', () => {
    expect(refusal(() => parse(streamConsumeSchema, {}))).toMatchObject({ status: 422, fields: ['consumer_group'] });
    expect(parse(streamConsumeSchema, { consumer_group: 'g' }).max_messages).toBe(100);
    expect(parse(streamConsumeSchema, { consumer_group: 'g', max_messages: 1000 }).max_messages).toBe(1000);
    expect(refusal(() => parse(streamConsumeSchema, { consumer_group: 'g', max_messages: 1001 })).status).toBe(422);
  });

  it('refuses a negative commit offset with 422 on offset', () => {
    expect(refusal(() => parse(commitSchema, { consumer_group: 'g', offset: -1 }))).toMatchObject({ status: 422, fields: ['offset'] });
  });
});

describe('subscription schemas', () => {
  it('applies the defaults 512 MB and 3600 s, and max_messages 10 (max 100)', () => {
    expect(parse(createSubscriptionSchema, { name: 's', topic_filter: 'a' })).toMatchObject({ max_size_mb: 512, message_ttl_seconds: 3600 });
    expect(parse(subscriptionConsumeSchema, { subscriber_id: 'x' }).max_messages).toBe(10);
    expect(refusal(() => parse(subscriptionConsumeSchema, { subscriber_id: 'x', max_messages: 101 })).status).toBe(422);
    expect(refusal(() => parse(subscriptionConsumeSchema, { subscriber_id: 'has space' }))).toMatchObject({ status: 422, fields: ['subscriber_id'] });
  });

  it('refreshes last_seen at least every tenth of the TTL', () => {
    expect(lastSeenRefreshMs(3600)).toBe(30_000);
    expect(lastSeenRefreshMs(10)).toBe(1000);
  });
});
