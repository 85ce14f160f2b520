/**
 * Webhook signatures (DESIGN.md sections 9 and 13), both over the exact body bytes before
 * compression:
 * - `{{.signature}}`: `v1=` + hex HMAC-SHA256 keyed with the secret string as stored
 *   (`whsec_...`, its UTF-8 bytes);
 * - Standard Webhooks (https://www.standardwebhooks.com): `webhook-id`, `webhook-timestamp` (Unix
 *   seconds) and `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">` keyed with
 *   the base64-decoded part of the secret after `whsec_`.
 */
import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
/** Standard Webhooks secrets are 24 to 64 random bytes; generated ones have 32. */
const SECRET_BYTES = { min: 24, max: 64, generated: 32 } as const;

/** A fresh signing secret: `whsec_` + base64 of 32 random bytes. */
export const newSecret = () => `${SECRET_PREFIX}${randomBytes(SECRET_BYTES.generated).toString('base64')}`;

/** Why `secret` is not a usable signing secret, or undefined. */
export function secretProblem(secret: string): string | undefined {
  if (!secret.startsWith(SECRET_PREFIX)) return `must start with ${SECRET_PREFIX}`;
  const b64 = secret.slice(SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || b64.length % 4 !== 0) return `must be ${SECRET_PREFIX} followed by base64`;
  const n = Buffer.from(b64, 'base64').length;
  if (n < SECRET_BYTES.min || n > SECRET_BYTES.max) return `must encode ${SECRET_BYTES.min} to ${SECRET_BYTES.max} bytes`;
  return undefined;
}

/**
 * The `{{.signature}}` value of a body.
 * @example signatureHeader(Buffer.from('{}'), 'whsec_...') // 'v1=5f2b...'
 */
export function signatureHeader(body: Buffer, secret: string): string {
  return `v1=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex')}`;
}

/** The key of the Standard Webhooks signature: the bytes the base64 after `whsec_` encodes. */
const standardWebhooksKey = (secret: string) => Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');

/**
 * The three Standard Webhooks headers of one attempt. `previousSecrets` (a rotated secret in its
 * grace period) sign too: the specification lets `webhook-signature` carry several signatures
 * separated by spaces, and a receiver accepts the message when any of them verifies, so it can
 * switch to the new secret at any moment of the grace period.
 * @example standardWebhooksHeaders('msg_1', 1700000000, body, secret)['webhook-signature'] // 'v1,K5oZ...'
 * @example standardWebhooksHeaders('msg_1', 1700000000, body, next, [old])['webhook-signature'] // 'v1,K5oZ... v1,Yx2c...'
 */
export function standardWebhooksHeaders(id: string, timestampSeconds: number, body: Buffer, secret: string, previousSecrets: string[] = []): Record<string, string> {
  const signed = Buffer.concat([Buffer.from(`${id}.${timestampSeconds}.`, 'utf8'), body]);
  const sigs = [secret, ...previousSecrets].map((s) => `v1,${createHmac('sha256', standardWebhooksKey(s)).update(signed).digest('base64')}`);
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': sigs.join(' ') };
}
