/**
 * The oldest message's age from expiry buckets (lambda/queues/storage/queue-oldest.ts): whatever the
 * TTL and publish times, the first non-empty bucket's bound is never after the oldest live
 * message's publish time and less than one bucket width before it. FC_SEED / FC_RUNS replay or
 * run more.
 */
import fc from 'fast-check';
import { byExpiryBucket, expiryBucketWidthMs } from '../../lambda/queues/storage/queues';
import { bucketPublishedNoEarlierThan } from '../../lambda/queues/storage/queue-oldest';

const FC = { seed: Number(process.env.FC_SEED ?? 2126), numRuns: Number(process.env.FC_RUNS ?? 300) };

describe('bucketPublishedNoEarlierThan', () => {
  it('bounds the oldest live message from below, within one bucket width', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_209_600 }),
        fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }),
        fc.array(fc.record({ offset: fc.integer({ min: 0, max: 3_600_000 }), acked: fc.boolean() }), { minLength: 1, maxLength: 40 }),
        (ttl, base, messages) => {
          const live = messages.filter((m) => !m.acked).map((m) => base + m.offset);
          // The buckets as storage keeps them: published minus acked, per bucket end.
          const buckets = byExpiryBucket(live, ttl, (p) => p, () => 1);
          const ends = [...buckets.keys()].sort((a, b) => a - b);
          if (live.length === 0) return ends.length === 0;
          const bound = bucketPublishedNoEarlierThan(ends[0], ttl);
          const oldest = Math.min(...live);
          const w = expiryBucketWidthMs(ttl);
          return bound <= oldest && oldest - bound < w;
        },
      ),
      FC,
    );
  });

  it('is up to one width early for a message expiring exactly at a bucket end, 1 ms early just after', () => {
    // TTL 60 s: 6 s buckets. A message published at 0 expires at 60 s, the end of its bucket,
    // which holds expiries in (54 s, 60 s]: published in (-6 s, 0].
    expect(bucketPublishedNoEarlierThan(60_000, 60)).toBe(-6_000);
    const end = [...byExpiryBucket([1], 60, (p) => p, () => 1).keys()][0];
    expect(end).toBe(66_000);
    expect(bucketPublishedNoEarlierThan(end, 60)).toBe(0);
  });
});
