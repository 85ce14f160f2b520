/**
 * Data keys for the application-level encryption of secrets at rest
 * (lambda/webhooks/storage/sealed.ts): envelope encryption, as the AWS Encryption SDK does it. A container asks
 * for one data key (KMS `GenerateDataKey`, AES-256) the first time it encrypts, keeps its
 * plaintext in memory only, and stores the KMS-encrypted copy beside every value it encrypts; a
 * reader decrypts that copy once (KMS `Decrypt`) and keeps the result for the container's life.
 * So KMS is called about once per container, not once per secret.
 *
 * - AWS: a KMS key of the stack (MSG_SECRETS_KMS_KEY_ARN; lib/constructs/functions.ts creates it
 *   and grants each function only the KMS actions it needs). Every request carries the encryption
 *   context {@link ENCRYPTION_CONTEXT}, which the key policy's grants require.
 *   https://docs.aws.amazon.com/kms/latest/APIReference/API_GenerateDataKey.html
 * - Locally (no KMS): a 256-bit key of the runtime (MSG_SECRETS_LOCAL_KEY, hex; `npm start` keeps
 *   it in MSG_DATA_DIR/secrets-key, mode 0600, or makes a new one per in-memory run) wraps the
 *   data keys with AES-256-GCM, so the same envelope code runs.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { config } from '../config';
import { withClientPlugins } from '../client-plugins';

/** Bound to every KMS request: a data key made for webhook secrets decrypts only for them. */
export const ENCRYPTION_CONTEXT = { purpose: 'webhook-secrets' } as const;

export interface DataKey {
  /** 32 bytes, in memory only. */
  plaintext: Buffer;
  /** The data key encrypted by the key provider, stored beside every value it encrypted. */
  encrypted: Buffer;
}

/** Where data keys come from: KMS in AWS, a local key elsewhere. */
export interface DataKeyProvider {
  /** A new data key (KMS GenerateDataKey). */
  generate(): Promise<DataKey>;
  /** The plaintext of a stored data key (KMS Decrypt). */
  decrypt(encrypted: Buffer): Promise<Buffer>;
}

/** The part of the SDK's KMS client this needs (tests inject a recording one). */
export interface KmsApi {
  send(command: GenerateDataKeyCommand | DecryptCommand): Promise<{ Plaintext?: Uint8Array; CiphertextBlob?: Uint8Array; KeyId?: string }>;
}

/** Data keys from KMS key `keyId`. */
export function kmsDataKeys(keyId: string, kms: KmsApi): DataKeyProvider {
  return {
    async generate() {
      const out = await kms.send(new GenerateDataKeyCommand({ KeyId: keyId, KeySpec: 'AES_256', EncryptionContext: { ...ENCRYPTION_CONTEXT } }));
      if (!out.Plaintext || !out.CiphertextBlob) throw new Error('KMS GenerateDataKey answered without a key');
      return { plaintext: Buffer.from(out.Plaintext), encrypted: Buffer.from(out.CiphertextBlob) };
    },
    async decrypt(encrypted) {
      // KeyId pins the key: a blob made by another key is refused rather than decrypted with it.
      const out = await kms.send(new DecryptCommand({ KeyId: keyId, CiphertextBlob: encrypted, EncryptionContext: { ...ENCRYPTION_CONTEXT } }));
      if (!out.Plaintext) throw new Error('KMS Decrypt answered without a key');
      return Buffer.from(out.Plaintext);
    },
  };
}

const LOCAL_WRAP = Buffer.from('local-v1');

/** Data keys wrapped by a local 256-bit key (AES-256-GCM): `local-v1 | iv(12) | tag(16) | wrapped key(32)`. */
export function localDataKeys(masterKey: Buffer): DataKeyProvider {
  if (masterKey.length !== 32) throw new Error('the local secrets key must be 32 bytes (64 hex characters): MSG_SECRETS_LOCAL_KEY');
  const aad = Buffer.from(JSON.stringify(ENCRYPTION_CONTEXT));
  return {
    async generate() {
      const plaintext = randomBytes(32);
      const iv = randomBytes(12);
      const c = createCipheriv('aes-256-gcm', masterKey, iv).setAAD(aad);
      const wrapped = Buffer.concat([c.update(plaintext), c.final()]);
      return { plaintext, encrypted: Buffer.concat([LOCAL_WRAP, iv, c.getAuthTag(), wrapped]) };
    },
    async decrypt(encrypted) {
      if (!encrypted.subarray(0, LOCAL_WRAP.length).equals(LOCAL_WRAP)) {
        throw new Error('a secret was encrypted with KMS, but this runtime has no KMS key (MSG_SECRETS_KMS_KEY_ARN); run it where the stack\'s key is');
      }
      const body = encrypted.subarray(LOCAL_WRAP.length);
      try {
        const d = createDecipheriv('aes-256-gcm', masterKey, body.subarray(0, 12)).setAAD(aad);
        d.setAuthTag(body.subarray(12, 28));
        return Buffer.concat([d.update(body.subarray(28)), d.final()]);
      } catch {
        // Named as KMS names a blob it cannot decrypt, so callers treat both alike.
        throw Object.assign(new Error('the data key does not decrypt with the local secrets key'), { name: 'InvalidCiphertextException' });
      }
    },
  };
}

let provider: DataKeyProvider | undefined;
let inMemoryKey: Buffer | undefined;

/** The provider of this container, from the configuration. */
export function dataKeyProvider(): DataKeyProvider {
  if (provider) return provider;
  const { secretsKmsKeyArn, secretsLocalKey, region } = config();
  if (secretsKmsKeyArn) {
    provider = kmsDataKeys(secretsKmsKeyArn, withClientPlugins('kms', new KMSClient({ region })));
  } else if (secretsLocalKey) {
    provider = localDataKeys(Buffer.from(secretsLocalKey, 'hex'));
  } else if (process.env.AWS_LAMBDA_FUNCTION_NAME) {
    throw new Error('MSG_SECRETS_KMS_KEY_ARN is not set: the stack sets it on every function that reads or writes webhook secrets');
  } else {
    // A process of its own (unit tests, a tool): secrets it writes are readable by it only.
    provider = localDataKeys((inMemoryKey ??= randomBytes(32)));
  }
  return provider;
}

/** Uses `p` from now on (tests), or the configured one again with `undefined`. */
export function setDataKeyProvider(p: DataKeyProvider | undefined) {
  provider = p;
}
