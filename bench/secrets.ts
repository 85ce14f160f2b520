/**
 * The cost of webhook secrets at rest (docs/security.md): how many KMS calls a container makes
 * (GenerateDataKey, Decrypt) and how much sealing adds to a webhook create and opening adds to a
 * delivery, priced at KMS's $0.03 per 10,000 requests.
 *
 * The code measured is the service's own: lambda/webhooks/storage/webhooks.ts `sealWebhook` / `openWebhook`
 * over lambda/webhooks/storage/sealed.ts, with the KMS data-key provider (lambda/core/adapters/data-keys.ts
 * `kmsDataKeys`) talking to a recording stand-in for KMS that counts each call by operation. A
 * "container" is a fresh data-key cache (`resetSealing`), as a new Lambda execution environment
 * starts with one. KMS's own round trip (a few ms in the region) is not in the latency: it is paid
 * once per container (the first seal or open), never per request, which the call counts show.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { DecryptCommand, GenerateDataKeyCommand } from '@aws-sdk/client-kms';
import { kmsDataKeys, setDataKeyProvider, type KmsApi } from '../lambda/core/adapters/data-keys';
import { kmsCalls, resetSealing } from '../lambda/webhooks/storage/sealed';
import { openWebhook, sealWebhook, type WebhookItem } from '../lambda/webhooks/storage/webhooks';
import { latencyStats } from './harness';
import { PRICES } from './prices';

/** A stand-in for KMS: real AES key wrapping, every call counted. */
function recordingKms(): KmsApi & { calls: Record<string, number> } {
  const master = randomBytes(32);
  const calls: Record<string, number> = {};
  return {
    calls,
    async send(command) {
      const name = command.constructor.name.replace(/Command$/, '');
      calls[name] = (calls[name] ?? 0) + 1;
      if (command instanceof GenerateDataKeyCommand) {
        const plaintext = randomBytes(32);
        const iv = randomBytes(12);
        const c = createCipheriv('aes-256-gcm', master, iv);
        const blob = Buffer.concat([iv, c.update(plaintext), c.final(), c.getAuthTag()]);
        return { Plaintext: plaintext, CiphertextBlob: blob };
      }
      if (command instanceof DecryptCommand) {
        const blob = Buffer.from(command.input.CiphertextBlob as Uint8Array);
        const d = createDecipheriv('aes-256-gcm', master, blob.subarray(0, 12));
        d.setAuthTag(blob.subarray(blob.length - 16));
        return { Plaintext: Buffer.concat([d.update(blob.subarray(12, blob.length - 16)), d.final()]) };
      }
      throw new Error(`unexpected KMS call ${name}`);
    },
  };
}

const webhook = (i: number): WebhookItem =>
  ({
    kind: 'WEBHOOK',
    id: `wh${i}`,
    name: `hook-${i}`,
    namespace: 'bench',
    topic_filter: 'orders/#',
    status: 'active',
    created_at: 0,
    updated_at: 0,
    secret: `whsec_${randomBytes(24).toString('base64url')}`,
    config: { url: 'https://hooks.example.com/in', headers: { 'X-Api-Key': randomBytes(16).toString('hex'), 'X-Tenant': 'acme' } },
  }) as unknown as WebhookItem;

interface SecretsBenchResult {
  webhooks: number;
  /** KMS calls of one container of the webhooks API that sealed every webhook. */
  createContainer: Record<string, number>;
  /** KMS calls of one delivery container that opened every webhook (all sealed under one data key). */
  deliveryContainer: Record<string, number>;
  sealMs: ReturnType<typeof latencyStats>;
  openMs: ReturnType<typeof latencyStats>;
}

async function benchSecrets({ scale = 1 }: { scale?: number } = {}): Promise<SecretsBenchResult> {
  const n = Math.max(50, Math.round(2000 * scale));
  const kms = recordingKms();
  setDataKeyProvider(kmsDataKeys('arn:aws:kms:us-east-1:000000000000:key/bench', kms));
  try {
    const items = Array.from({ length: n }, (_, i) => webhook(i));
    resetSealing();
    const sealed: WebhookItem[] = [];
    const sealSamples: number[] = [];
    for (const w of items) {
      const t = performance.now();
      sealed.push(await sealWebhook(w));
      sealSamples.push(performance.now() - t);
    }
    const createContainer = { GenerateDataKey: kmsCalls.generate, Decrypt: kmsCalls.decrypt };
    resetSealing(); // a delivery container starts with no data key
    const openSamples: number[] = [];
    for (const w of sealed) {
      const t = performance.now();
      const open = await openWebhook(w);
      openSamples.push(performance.now() - t);
      if (open?.secret === w.secret) throw new Error('the bench read a secret that was not sealed');
    }
    const deliveryContainer = { GenerateDataKey: kmsCalls.generate, Decrypt: kmsCalls.decrypt };
    const recorded = (kms.calls.GenerateDataKey ?? 0) + (kms.calls.Decrypt ?? 0);
    if (recorded !== createContainer.GenerateDataKey + createContainer.Decrypt + deliveryContainer.GenerateDataKey + deliveryContainer.Decrypt) {
      throw new Error(`KMS saw ${recorded} calls, the sealing counters ${JSON.stringify({ createContainer, deliveryContainer })}`);
    }
    return { webhooks: n, createContainer, deliveryContainer, sealMs: latencyStats(sealSamples), openMs: latencyStats(openSamples) };
  } finally {
    setDataKeyProvider(undefined);
    resetSealing();
  }
}

const usd = (v: number) => `$${v < 0.01 ? v.toPrecision(2) : v.toFixed(2)}`;

/** @public bench/run.ts imports it by name (`npm run bench -- --figures`). */
export async function benchMarkdown({ scale = 1, log }: { scale?: number; log?: (l: string) => void } = {}): Promise<string> {
  log?.(`webhook secrets: sealing and opening ${Math.max(50, Math.round(2000 * scale))} webhooks`);
  const r = await benchSecrets({ scale });
  const calls = (c: Record<string, number>) => `${c.GenerateDataKey} GenerateDataKey, ${c.Decrypt} Decrypt`;
  const perContainer = (c: Record<string, number>) => (c.GenerateDataKey + c.Decrypt) * PRICES.kmsRequest;
  return [
    '### Webhook secrets at rest (KMS)',
    '',
    '| container | KMS calls (whole container) | added p50 ms | added p99 ms | KMS cost per container |',
    '|---|---|---:|---:|---:|',
    `| webhooks API, ${r.webhooks} creates (seal secret + 2 header values) | ${calls(r.createContainer)} | ${r.sealMs.p50Ms} | ${r.sealMs.p99Ms} | ${usd(perContainer(r.createContainer))} |`,
    `| webhook delivery, ${r.webhooks} deliveries (open them) | ${calls(r.deliveryContainer)} | ${r.openMs.p50Ms} | ${r.openMs.p99Ms} | ${usd(perContainer(r.deliveryContainer))} |`,
    '',
    `KMS calls do not grow with requests: one GenerateDataKey per container that writes secrets, one Decrypt per data key a container reads (one per writing container whose webhooks it delivers). At KMS's $0.03 per 10,000 requests, a container start costs ${usd(PRICES.kmsRequest)} of KMS; with one new container per 1,000 requests that is ${usd(PRICES.kmsRequest * 1000)} per million requests, against API Gateway's $3.50. Latency is the sealing code (AES-256-GCM, data key cached); KMS's own round trip is added once per container, at its first seal or open.`,
  ].join('\n');
}
