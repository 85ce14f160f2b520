import { createHmac, timingSafeEqual } from 'node:crypto';
import { newSecret, secretProblem, signatureHeader, standardWebhooksHeaders } from '../../lambda/webhooks/rules/signatures';

/**
 * A Standard Webhooks verifier written from the specification
 * (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md),
 * independent of the code under test: key = base64-decoded secret after `whsec_`, signed content
 * `${id}.${timestamp}.${body}`, header a space-separated list of `v1,<base64>`, timestamps
 * within a tolerance.
 */
function verify(secret: string, headers: Record<string, string>, body: Buffer, nowSeconds: number, toleranceSeconds = 300): boolean {
  const id = headers['webhook-id'];
  const ts = headers['webhook-timestamp'];
  const sigHeader = headers['webhook-signature'];
  if (!id || !ts || !sigHeader || !/^\d+$/.test(ts)) return false;
  if (Math.abs(nowSeconds - Number(ts)) > toleranceSeconds) return false;
  const key = Buffer.from(secret.split('_')[1], 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${ts}.`).update(body).digest();
  return sigHeader.split(' ').some((s) => {
    const [version, b64] = s.split(',');
    if (version !== 'v1' || !b64) return false;
    const got = Buffer.from(b64, 'base64');
    return got.length === expected.length && timingSafeEqual(got, expected);
  });
}

describe('Standard Webhooks headers', () => {
  const secret = newSecret();
  const body = Buffer.from('{"topic":"a","payload":"b"}');
  const now = 1_800_000_000;

  it('verify with an independent verifier', () => {
    expect(verify(secret, standardWebhooksHeaders('msg_1', now, body, secret), body, now)).toBe(true);
  });
  it('fail verification when the body changes by one byte', () => {
    const h = standardWebhooksHeaders('msg_1', now, body, secret);
    expect(verify(secret, h, Buffer.from('{"topic":"a","payload":"c"}'), now)).toBe(false);
  });
  it('fail verification with another secret', () => {
    expect(verify(newSecret(), standardWebhooksHeaders('msg_1', now, body, secret), body, now)).toBe(false);
  });
  it('fail verification when the id or timestamp is swapped', () => {
    const h = standardWebhooksHeaders('msg_1', now, body, secret);
    expect(verify(secret, { ...h, 'webhook-id': 'msg_2' }, body, now)).toBe(false);
    expect(verify(secret, { ...h, 'webhook-timestamp': String(now + 1) }, body, now)).toBe(false);
  });
  it('are refused by the verifier when too old (replay)', () => {
    expect(verify(secret, standardWebhooksHeaders('msg_1', now - 3600, body, secret), body, now)).toBe(false);
  });
  it('match the Standard Webhooks reference vector', () => {
    // Test vector of the standard-webhooks reference libraries.
    const s = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const h = standardWebhooksHeaders('msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, Buffer.from('{"test": 2432232314}'), s);
    expect(h['webhook-signature']).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });
});

describe('{{.signature}}', () => {
  it('is v1= + hex HMAC-SHA256 of the body keyed with the whole secret string', () => {
    const secret = newSecret();
    const body = Buffer.from('hello');
    expect(signatureHeader(body, secret)).toBe(`v1=${createHmac('sha256', secret).update(body).digest('hex')}`);
  });
});

describe('secrets', () => {
  it('are whsec_ + base64 of 32 random bytes and differ each time', () => {
    const a = newSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(newSecret()).not.toBe(a);
    expect(secretProblem(a)).toBeUndefined();
  });
  it.each([
    ['no prefix', 'abc', 'whsec_'],
    ['not base64', 'whsec_!!!!', 'base64'],
    ['too short', `whsec_${Buffer.alloc(8).toString('base64')}`, 'bytes'],
    ['too long', `whsec_${Buffer.alloc(100).toString('base64')}`, 'bytes'],
  ])('refuses a secret with %s', (_w, s, why) => expect(secretProblem(s)).toContain(why));
});
