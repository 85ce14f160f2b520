/**
 * Envelope encryption of secrets at rest (docs/security.md). One data key per container (one KMS
 * GenerateDataKey), decrypted data keys cached (one KMS Decrypt per data key another container
 * made), every KMS request with the encryption context and the stack's key, and each sealed value
 * bound to where it is stored.
 */
import { createCipheriv, randomBytes } from 'node:crypto';
import type { DecryptCommand, GenerateDataKeyCommand } from '@aws-sdk/client-kms';
import { ENCRYPTION_CONTEXT, kmsDataKeys, localDataKeys, setDataKeyProvider, type KmsApi } from '../../lambda/core/adapters/data-keys';
import { isSealed, kmsCalls, resetSealing, seal, unseal as unsealAs, UnopenableSecretError } from '../../lambda/webhooks/storage/sealed';

/** On an item marked as sealed (the form every write makes now). */
const unseal = (v: string, context: string[]) => unsealAs(v, context, { legacy: false });

/** A KMS stand-in: a master key wraps data keys; records every request. */
function fakeKms() {
  const master = randomBytes(32);
  const requests: { name: string; input: Record<string, unknown> }[] = [];
  const local = localDataKeys(master);
  const api: KmsApi = {
    async send(command: GenerateDataKeyCommand | DecryptCommand) {
      requests.push({ name: command.constructor.name, input: command.input as unknown as Record<string, unknown> });
      if (command.constructor.name === 'GenerateDataKeyCommand') {
        const k = await local.generate();
        return { Plaintext: k.plaintext, CiphertextBlob: k.encrypted };
      }
      return { Plaintext: await local.decrypt(Buffer.from((command.input as { CiphertextBlob: Uint8Array }).CiphertextBlob)) };
    },
  };
  return { api, requests };
}

const KEY_ARN = 'arn:aws:kms:eu-west-1:123456789012:key/abc';
const at = ['webhook', 'acme', 'orders', 'secret'];

afterEach(() => {
  setDataKeyProvider(undefined);
  resetSealing();
});

describe('sealed secrets', () => {
  it('round-trip, with a new IV each time and no plaintext in the stored form', async () => {
    const a = await seal('whsec_abc', at);
    const b = await seal('whsec_abc', at);
    expect(isSealed(a)).toBe(true);
    expect(a).not.toBe(b);
    expect(a).not.toContain('whsec_abc');
    expect(await unseal(a, at)).toBe('whsec_abc');
  });

  it('seal a value that looks sealed like any other, and it opens to what was given', async () => {
    for (const given of ['enc1.AAAA.BBBB', await seal('inner', at)]) {
      const sealed = await seal(given, at);
      expect(sealed).not.toBe(given);
      expect(await unseal(sealed, at)).toBe(given);
    }
  });

  it('on a marked item, refuse a value that is not sealed instead of reading it as a plaintext', async () => {
    await expect(unseal('whsec_plain', at)).rejects.toThrow(UnopenableSecretError);
    await expect(unseal('enc1.AAAA.BBBB', at)).rejects.toThrow(/not in the sealed form/);
  });

  it('on an item from before the marker, read a plaintext, or a value that can never open, as it was written', async () => {
    const legacy = { legacy: true };
    expect(await unsealAs('whsec_legacy', at, legacy)).toBe('whsec_legacy');
    expect(await unsealAs('enc1.AAAA.BBBB', at, legacy)).toBe('enc1.AAAA.BBBB');
    const sealed = await seal('whsec_abc', at);
    expect(await unsealAs(sealed, at, legacy)).toBe('whsec_abc');
    const moved = await seal('whsec_abc', ['webhook', 'acme', 'other', 'secret']);
    expect(await unsealAs(moved, at, legacy)).toBe(moved); // fails its integrity check: the value as written
  });

  it('remember a data key KMS refused for a minute: one Decrypt, not one per read', async () => {
    jest.useFakeTimers();
    try {
      const kms = fakeKms();
      setDataKeyProvider(kmsDataKeys(KEY_ARN, kms.api));
      const sealed = await seal('x', at);
      resetSealing();
      const refused = Object.assign(new Error('refused'), { name: 'InvalidCiphertextException' });
      let decrypts = 0;
      setDataKeyProvider(kmsDataKeys(KEY_ARN, { send: async () => { decrypts++; throw refused; } }));
      for (let i = 0; i < 5; i++) await expect(unseal(sealed, at)).rejects.toMatchObject({ name: 'UnopenableSecretError', permanent: true });
      expect(decrypts).toBe(1);
      jest.advanceTimersByTime(61_000);
      await expect(unseal(sealed, at)).rejects.toThrow(UnopenableSecretError);
      expect(decrypts).toBe(2);
    } finally {
      jest.useRealTimers();
    }
  });

  it.each([
    ['another namespace', ['webhook', 'other', 'orders', 'secret']],
    ['another webhook', ['webhook', 'acme', 'billing', 'secret']],
    ['another field', ['webhook', 'acme', 'orders', 'headers.Authorization']],
  ])('do not open when moved to %s', async (_what, elsewhere) => {
    const sealed = await seal('whsec_abc', at);
    await expect(unseal(sealed, elsewhere)).rejects.toThrow();
  });

  it('refuse a tampered ciphertext', async () => {
    const sealed = await seal('whsec_abc', at);
    const parts = sealed.split('.');
    const ct = Buffer.from(parts[3], 'base64url');
    ct[0] ^= 1;
    parts[3] = ct.toString('base64url');
    await expect(unseal(parts.join('.'), at)).rejects.toThrow();
  });

  it('call KMS once per container to encrypt, never to read back its own writes, once per foreign data key', async () => {
    const kms = fakeKms();
    setDataKeyProvider(kmsDataKeys(KEY_ARN, kms.api));
    const values = await Promise.all(Array.from({ length: 50 }, (_, i) => seal(`secret-${i}`, at)));
    for (const [i, v] of values.entries()) expect(await unseal(v, at)).toBe(`secret-${i}`);
    expect(kms.requests.map((r) => r.name)).toEqual(['GenerateDataKeyCommand']);
    expect(kms.requests[0].input).toEqual({ KeyId: KEY_ARN, KeySpec: 'AES_256', EncryptionContext: ENCRYPTION_CONTEXT });

    // Another container: its cache is empty, so it decrypts the data key once, then reads from memory.
    resetSealing();
    for (const [i, v] of values.entries()) expect(await unseal(v, at)).toBe(`secret-${i}`);
    expect(kms.requests.map((r) => r.name)).toEqual(['GenerateDataKeyCommand', 'DecryptCommand']);
    expect(kms.requests[1].input).toMatchObject({ KeyId: KEY_ARN, EncryptionContext: ENCRYPTION_CONTEXT });
    expect(kmsCalls).toEqual({ generate: 0, decrypt: 1 });
  });

  it('ask KMS again after a failed call instead of caching the failure', async () => {
    let fail = true;
    const kms = fakeKms();
    setDataKeyProvider(kmsDataKeys(KEY_ARN, { send: async (c) => { if (fail) throw new Error('ThrottlingException'); return kms.api.send(c); } }));
    await expect(seal('x', at)).rejects.toThrow('ThrottlingException');
    fail = false;
    expect(await unseal(await seal('x', at), at)).toBe('x');
  });

  it('locally, refuse data keys that KMS made, with what to do', async () => {
    const local = localDataKeys(randomBytes(32));
    const c = createCipheriv('aes-256-gcm', randomBytes(32), randomBytes(12));
    await expect(local.decrypt(Buffer.concat([c.update(randomBytes(32)), c.final()]))).rejects.toThrow(/MSG_SECRETS_KMS_KEY_ARN/);
    expect(() => localDataKeys(randomBytes(16))).toThrow(/64 hex characters/);
  });
});
