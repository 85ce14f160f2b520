/**
 * Application-level encryption of secrets at rest: a value is sealed with
 * AES-256-GCM under the container's data key (lambda/core/adapters/data-keys.ts, envelope encryption with
 * KMS), bound to where it is stored (the additional authenticated data names the namespace, the
 * item and the field, so a sealed value copied into another item or namespace does not open).
 *
 * Format: `enc1.<encrypted data key>.<iv>.<ciphertext>.<tag>`, each part base64url. Every value
 * given to {@link seal} is sealed, whatever it looks like: a user may well write `enc1.AAAA` into
 * a header. Whether a stored value is sealed is known from where it is stored (its item says so,
 * ./webhooks.ts `sealing`), never from its prefix: {@link unseal} with `legacy: false`.
 *
 * Items written before that marker (`legacy: true`) hold plaintexts from before encryption and
 * values sealed by earlier versions, which returned a user's value that started with the prefix
 * as it was. There a value without the prefix, or one that can never open (malformed, a data key
 * KMS refuses as invalid, a failed GCM check: what this module seals always opens), is read as the
 * plaintext it was written as; they are sealed on the item's next write (migration on write).
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { dataKeyProvider, type DataKey } from '../../core/adapters/data-keys';

const PREFIX = 'enc1.';

/** Whether a value has the sealed form (on a legacy item, it may still be a plaintext: {@link unseal}). */
export const isSealed = (v: unknown): v is string => typeof v === 'string' && v.startsWith(PREFIX);

/** A stored value that does not open (tampered, moved, or its data key refused or unreachable). */
export class UnopenableSecretError extends Error {
  constructor(
    message: string,
    /** Retrying cannot help: the value itself is wrong (as opposed to KMS being unreachable). */
    readonly permanent: boolean,
  ) {
    super(message);
    this.name = 'UnopenableSecretError';
  }
}

/**
 * How long a data key that failed to decrypt is remembered as failed: a value that cannot open,
 * read again by every list or delivery, costs one KMS Decrypt a minute rather than one per read
 * (each Decrypt of a stored blob is a billed request, and its bytes may be a user's).
 */
const FAILED_KEY_MS = 60_000;

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
    // A failure is kept for a while, then asked again (KMS may have been unreachable).
    key.catch(() => setTimeout(() => opened.get(id) === key && opened.delete(id), FAILED_KEY_MS).unref());
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

/** Seals `plaintext` for `context`, whatever it looks like. */
export async function seal(plaintext: string, context: SealContext): Promise<string> {
  const key = await currentKey();
  // Seeding the opened cache: this container reads back what it wrote without a Decrypt.
  const id = createHash('sha256').update(key.encrypted).digest('base64url');
  if (!opened.has(id)) opened.set(id, Promise.resolve(key.plaintext));
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key.plaintext, iv).setAAD(aadOf(context));
  const ct = Buffer.concat([c.update(plaintext, 'utf8'), c.final()]);
  return PREFIX + [key.encrypted, iv, ct, c.getAuthTag()].map((b) => b.toString('base64url')).join('.');
}

/**
 * AWS KMS Decrypt errors that say the blob itself is wrong, not that KMS could not be reached:
 * InvalidCiphertextException, IncorrectKeyException
 * (https://docs.aws.amazon.com/kms/latest/APIReference/API_Decrypt.html#API_Decrypt_Errors).
 */
const KMS_REFUSED = new Set(['InvalidCiphertextException', 'IncorrectKeyException']);

async function open(value: string, context: SealContext): Promise<string> {
  const parts = value.slice(PREFIX.length).split('.');
  const [edk, iv, ct, tag] = parts.map((p) => Buffer.from(p, 'base64url'));
  if (parts.length !== 4 || edk.length === 0 || iv.length !== 12 || tag.length !== 16) throw new UnopenableSecretError('it is not in the sealed form', true);
  let key: Buffer;
  try {
    key = await openKey(edk);
  } catch (e) {
    const name = (e as Error).name;
    const permanent = KMS_REFUSED.has(name);
    throw new UnopenableSecretError(`its data key did not decrypt (${name}: ${(e as Error).message})`, permanent);
  }
  try {
    const d = createDecipheriv('aes-256-gcm', key, iv).setAAD(aadOf(context));
    d.setAuthTag(tag);
    return Buffer.concat([d.update(ct), d.final()]).toString('utf8');
  } catch {
    throw new UnopenableSecretError('it failed its integrity check (changed, or copied from elsewhere)', true);
  }
}

/**
 * Opens a value stored for `context`. On an item that says its secrets are sealed (`legacy:
 * false`) the value must open: otherwise {@link UnopenableSecretError}. On an item from before
 * that marker, a value that can never open is the plaintext it was written as (module comment);
 * one whose data key could not be reached now still throws.
 */
export async function unseal(value: string, context: SealContext, opts: { legacy: boolean }): Promise<string> {
  if (opts.legacy && !isSealed(value)) return value;
  if (!isSealed(value)) throw new UnopenableSecretError('it is not in the sealed form', true);
  try {
    return await open(value, context);
  } catch (e) {
    if (opts.legacy && e instanceof UnopenableSecretError && e.permanent) return value;
    throw e;
  }
}
