/**
 * The settled record of a queue message (lambda/queues/storage/queue-message-records.ts) on DynamoDB
 * Local: an exhausted message's record is a claim until its dead-lettering is done. Another
 * settle reads a live claim as `busy` (never as a message already dead-lettered), takes over a
 * lapsed one, and reads a finished record, an expiry's or an ack's as `settled`.
 */
import { randomBytes } from 'node:crypto';
import { deleteAckRecord, finishSettledRecord, putAckRecord, putSettledRecord } from '../../lambda/queues/storage/queue-message-records';

const ns = 'settle-claims';
const queueId = randomBytes(6).toString('hex');
const keep = (now: number) => now + 600_000;
let n = 0;
const messageId = () => `m${++n}-${randomBytes(4).toString('hex')}`;

describe('settled records', () => {
  it('a live claim is busy for another settle, won again by its own retried write, and final once finished', async () => {
    const now = Date.now();
    const m = messageId();
    expect(await putSettledRecord(ns, queueId, m, keep(now), now, 'a', now + 50_000)).toBe('won');
    expect(await putSettledRecord(ns, queueId, m, keep(now), now, 'a', now + 50_000)).toBe('won');
    expect(await putSettledRecord(ns, queueId, m, keep(now), now + 1000, 'b', now + 51_000)).toBe('busy');
    expect(await finishSettledRecord(ns, queueId, m, 'a')).toBe(true);
    // A retried finish (its answer lost) is still this settle's.
    expect(await finishSettledRecord(ns, queueId, m, 'a')).toBe(true);
    expect(await putSettledRecord(ns, queueId, m, keep(now), now + 60_000, 'b', now + 110_000)).toBe('settled');
  });

  it('a lapsed claim is taken over, and the settle that lost it neither finishes nor removes the new one', async () => {
    const now = Date.now();
    const m = messageId();
    expect(await putSettledRecord(ns, queueId, m, keep(now), now, 'a', now + 50_000)).toBe('won');
    expect(await putSettledRecord(ns, queueId, m, keep(now), now + 50_000, 'b', now + 100_000)).toBe('won');
    expect(await finishSettledRecord(ns, queueId, m, 'a')).toBe(false);
    await deleteAckRecord(ns, queueId, m, 'a');
    expect(await putSettledRecord(ns, queueId, m, keep(now), now + 60_000, 'c', now + 110_000)).toBe('busy');
  });

  it('a claim taken back frees the message; an expiry and an ack are final at once', async () => {
    const now = Date.now();
    const m = messageId();
    expect(await putSettledRecord(ns, queueId, m, keep(now), now, 'a', now + 50_000)).toBe('won');
    await deleteAckRecord(ns, queueId, m, 'a');
    expect(await putSettledRecord(ns, queueId, m, keep(now), now + 1000, 'b', now + 51_000)).toBe('won');

    const expired = messageId();
    expect(await putSettledRecord(ns, queueId, expired, keep(now), now, 'a')).toBe('won');
    expect(await putSettledRecord(ns, queueId, expired, keep(now), now + 3_600_000, 'b', now + 3_650_000)).toBe('settled');

    const acked = messageId();
    expect(await putAckRecord(ns, queueId, acked, now + 30_000, now, 'a', keep(now))).toBe(true);
    expect(await putSettledRecord(ns, queueId, acked, keep(now), now + 3_600_000, 'b', now + 3_650_000)).toBe('settled');
  });
});
