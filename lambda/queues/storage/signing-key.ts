/**
 * The key receipt handles are signed with (lambda/queues/rules/receipt-handles.ts): per deployment,
 * never in code or logs. In AWS a Secrets Manager secret the stack generates
 * (MSG_RECEIPT_KEY_SECRET_ARN), read once per container with Powertools Parameters; locally a
 * random key the local runtime keeps with its data (MSG_RECEIPT_KEY).
 *
 * Rotating the secret makes the handles issued before invalid: their acks answer 409 and those
 * messages are delivered again after their visibility timeout (at least once, nothing lost).
 */
import { getSecret } from '@aws-lambda-powertools/parameters/secrets';
import { config } from '../../core/config';

let key: Promise<Buffer> | undefined;

async function load(): Promise<Buffer> {
  const { receiptKey, receiptKeySecretArn } = config();
  if (receiptKey) return Buffer.from(receiptKey, 'utf8');
  if (!receiptKeySecretArn) {
    throw new Error('no receipt-handle signing key: set MSG_RECEIPT_KEY_SECRET_ARN (the stack does) or MSG_RECEIPT_KEY (the local runtime does)');
  }
  // Cached for the container's life: the key changes only with a deliberate rotation.
  const secret = await getSecret<string>(receiptKeySecretArn, { maxAge: 24 * 3600 });
  if (!secret) throw new Error(`the receipt-handle signing key secret ${receiptKeySecretArn} is empty`);
  return Buffer.from(secret, 'utf8');
}

/** The signing key of this deployment (loaded once per container). */
export function receiptSigningKey(): Promise<Buffer> {
  key ??= load().catch((e) => {
    key = undefined; // a failed load (throttling) is retried by the next request
    throw e;
  });
  return key;
}
