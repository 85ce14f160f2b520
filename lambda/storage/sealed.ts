/**
 * Application-level encryption of secrets at rest (issue 25 item 7): a value is sealed with
 * AES-256-GCM under the container's data key (../adapters/data-keys.ts, envelope encryption with
 * KMS), bound to where it is stored (the additional authenticated data names the namespace, the
 * item and the field, so a sealed value copied into another item or namespace does not open).
 *
 * Format: `enc1.<encrypted data key>.<iv>.<ciphertext>.<tag>`, each part base64url. A value
 * without the prefix is a plaintext written before encryption: it is read as it is and sealed the
 * next time its item is written (migration on write).
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { dataKeyProvider, type DataKey } from '../adapters/data-keys';

const PREFIX = 'enc1.';

/** Whether a stored value is sealed (not a plaintext from before encryption). */
export const isSealed = (v: unknown): v is string => typeof v === 'string' && v.startsWith(PREFIX);

/** The data key this container encrypts with, made on first use. */
let current: Promise<DataKey> | undefined;
/** Data keys decrypted by this container, by the hash of their encrypted form (at most {@link MAX_KEYS}). */
const opened = new Map<string, Promise<Buffer>>();
const MAX_KEYS = 256;

/** KMS calls this container made (bench and tests). */
export const kmsCalls = { generate: 0, decrypt: 0 };

function currentKey(): Promise<DataKey> {
  if (!current) {
    kmsCalls.generate++;
    current = dataKeyProvider().generate();
    // A failed call is not kept: the next seal asks again.
    current.catch(() => (current = undefined));
  }
  return current;
}

function openKey(encrypted: Buffer): Promise<Buffer> {
  const id = createHash('sha256').update(encrypted).digest('base64url');
  let key = opened.get(id);
  if (!key) {
    if (opened.size >= MAX_KEYS) opened.delete(opened.keys().next().value as string);
    kmsCalls.decrypt++;
    key = dataKeyProvider().decrypt(encrypted);
    opened.set(id, key);
    key.catch(() => opened.delete(id));
  }
  return key;
}

/** Forgets the cached data keys (tests that switch providers). */
export function resetSealing() {
  current = undefined;
  opened.clear();
  kmsCalls.generate = 0;
  kmsCalls.decrypt = 0;
}

/** Where a value is stored, bound into its ciphertext. */
export type SealContext = readonly string[];

const aadOf = (context: SealContext) => Buffer.from(JSON.stringify(context));

/** Seals `plaintext` for `context`; an already sealed value is returned as it is. */
export async function seal(plaintext: string, context: SealContext): Promise<string> {
  if (isSealed(plaintext)) return plaintext;
  const key = await currentKey();
  // Seeding the opened cache: this container reads back what it wrote without a Decrypt.
  const id = createHash('sha256').update(key.encrypted).digest('base64url');
  if (!opened.has(id)) opened.set(id, Promise.resolve(key.plaintext));
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key.plaintext, iv).setAAD(aadOf(context));
  const ct = Buffer.concat([c.update(plaintext, 'utf8'), c.final()]);
  return PREFIX + [key.encrypted, iv, ct, c.getAuthTag()].map((b) => b.toString('base64url')).join('.');
}

/** Opens a sealed value stored for `context`; a plaintext (written before encryption) is returned as it is. */
export async function unseal(value: string, context: SealContext): Promise<string> {
  if (!isSealed(value)) return value;
  const parts = value.slice(PREFIX.length).split('.');
  if (parts.length !== 4) throw new Error('a sealed secret is malformed');
  const [edk, iv, ct, tag] = parts.map((p) => Buffer.from(p, 'base64url'));
  const key = await openKey(edk);
  const d = createDecipheriv('aes-256-gcm', key, iv).setAAD(aadOf(context));
  d.setAuthTag(tag);
  return Buffer.concat([d.update(ct), d.final()]).toString('utf8');
}
