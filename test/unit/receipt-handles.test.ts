import { randomBytes } from 'node:crypto';
import { judgeHandle, readHandle, signHandle, type Delivery } from '../../lambda/queues/rules/receipt-handles';

const key = randomBytes(32);
const now = 1_800_000_000_000;
const delivery: Delivery = { q: 'Q1', m: 'M1', u: now + 30_000, s: 42, h: 'AQEB+sqs/handle==' };
const judge = (token: string, o: Partial<{ queueId: string; messageId: string; now: number; key: Buffer }> = {}) =>
  judgeHandle(token, { queueId: 'Q1', messageId: 'M1', now, key, ...o });

describe('receipt handles', () => {
  it('carry the delivery they were signed for, SQS handle and size included', () => {
    const token = signHandle(delivery, key);
    expect(token).toMatch(/^1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(readHandle(token)?.delivery).toEqual(delivery);
    expect(judge(token)).toEqual({ verdict: 'current', delivery });
  });

  it('are stale (409) once the delivery visibility has ended, to the millisecond', () => {
    const token = signHandle(delivery, key);
    expect(judge(token, { now: delivery.u - 1 }).verdict).toBe('current');
    expect(judge(token, { now: delivery.u })).toEqual({ verdict: 'stale', why: 'expired' });
  });

  it('name a gone message (404) once the visibility and the message\'s TTL from its publish have both ended', () => {
    const published = { ...delivery, p: now - 60_000 };
    const token = signHandle(published, key);
    const judgeTtl = (at: number, ttlMs: number) => judgeHandle(token, { queueId: 'Q1', messageId: 'M1', now: at, key, ttlMs });
    // Visibility ended, TTL not yet: 409, the message may come back.
    expect(judgeTtl(published.u, 120_000)).toEqual({ verdict: 'stale', why: 'expired' });
    // Both ended: gone.
    expect(judgeTtl(published.u, 90_000)).toEqual({ verdict: 'gone' });
    // A current handle stays current whatever the TTL says (the ack decides on it as before).
    expect(judgeTtl(published.u - 1, 1).verdict).toBe('current');
    // A handle without its publish time (made before `p`) cannot tell: 409.
    expect(judgeHandle(signHandle(delivery, key), { queueId: 'Q1', messageId: 'M1', now: delivery.u, key, ttlMs: 1 })).toEqual({ verdict: 'stale', why: 'expired' });
  });

  it('are stale (409) when anything of them was altered: the payload, the signature, or a suffix', () => {
    const token = signHandle(delivery, key);
    const [v, payload, sig] = token.split('.');
    const longer = Buffer.from(JSON.stringify({ ...delivery, u: delivery.u + 3_600_000 })).toString('base64url');
    const otherSize = Buffer.from(JSON.stringify({ ...delivery, s: 0 })).toString('base64url');
    // A first character that differs (the last one only carries 4 of the signature's bits).
    const otherFirst = `${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}`;
    for (const altered of [`${v}.${longer}.${sig}`, `${v}.${otherSize}.${sig}`, `${token}-tampered`, `${token}x`, `${v}.${payload}.${otherFirst}`]) {
      expect(judge(altered)).toEqual({ verdict: 'stale', why: 'altered' });
    }
  });

  it('signed with another deployment key are stale (409)', () => {
    expect(judge(signHandle(delivery, randomBytes(32)))).toEqual({ verdict: 'stale', why: 'altered' });
  });

  it('name nothing here (404) when unreadable, or of another message, queue or incarnation', () => {
    for (const token of ['', 'whatever', '1.e30.x', '2.' + signHandle(delivery, key).slice(2), '1.bm90IGpzb24.sig', '1.' + Buffer.from('{"q":"Q1","m":"M1"}').toString('base64url') + '.x']) {
      expect(judge(token)).toEqual({ verdict: 'other' });
    }
    const token = signHandle(delivery, key);
    expect(judge(token, { messageId: 'M2' })).toEqual({ verdict: 'other' });
    expect(judge(token, { queueId: 'Q0' })).toEqual({ verdict: 'other' });
  });
});
