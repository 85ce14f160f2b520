/**
 * What memory the queues function needs: its bundle (built as the stack builds it, SDK bundled,
 * minified) runs in a fresh Node 22 process, as in a Lambda sandbox, and answers the largest
 * consume there is: `max_messages: 100` on a queue of 256 KiB messages, which fills a consume's
 * answer budget (`CONSUME_RESPONSE_BYTES`, lambda/queues/consume.ts: 2 MiB) after a receive of 10
 * of them (about 2.5 MiB from SQS, the most one receive brings). The process's peak resident set
 * (VmHWM in /proc/self/status, the kernel's high-water mark, what Lambda reports as "Max
 * Memory Used") must leave a margin under the function's memory setting
 * (lib/constructs/functions.ts QUEUES_MEMORY_MB), for the Lambda runtime client and for what this
 * process does not hold (docs/performance.md "Memory of the queues function").
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { queueApi } from '../fixtures/queues';
import { bundlingOptions } from '../../lib/constructs/bundling';
import { QUEUES_MEMORY_MB } from '../../lib/constructs/functions';
import { MAX_PAYLOAD_BYTES } from '../../lambda/core/rules/message';
import { CONSUME_RESPONSE_BYTES } from '../../lambda/queues/consume';

jest.setTimeout(180_000);

const ROOT = join(__dirname, '../..');
/** The Node 22 of the `node` devDependency: the Lambda runtime's major version. */
const NODE22 = join(ROOT, 'node_modules/node/bin/node');
/**
 * Margin kept under the memory setting for the Lambda runtime client, which runs in the same
 * process. At 128 MB with the 2 MiB answer budget the peak was 95 to 111 MiB (design record 25); the "115 to 218 MiB once loaded"
 * that CI runs showed were the jest worker's own high-water mark, read through getrusage (see
 * test/fixtures/consume-memory-probe.mjs), not this process's.
 */
const MARGIN_MB = 8;

let server: TestServer;
let ns: TestNamespace;
let q: ReturnType<typeof queueApi>;
let dir: string;
let bundle: string;
beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('qmem');
  q = queueApi(client(server.baseUrl, ns.key));
  dir = mkdtempSync(join(tmpdir(), 'queues-memory-'));
  bundle = join(dir, 'index.mjs');
  const opts = bundlingOptions('bundled');
  buildSync({
    entryPoints: [join(ROOT, 'lambda/handlers/queues.ts')], bundle: true, outfile: bundle, platform: 'node', format: 'esm',
    target: 'node22', minify: true, mainFields: opts.mainFields, external: opts.externalModules, banner: { js: opts.banner ?? '' }, logLevel: 'silent',
  });
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Heap limits for V8 scaled to the function's memory (a tenth for the young generation, the rest
 * for the old), standing in for the small machine a Lambda sandbox is, so that garbage is
 * collected under pressure rather than as on a machine with gigabytes free. The peak barely
 * depends on them: with a 48 MiB old generation it was 4 MiB lower, the rest being live data and
 * buffers.
 */
function lambdaHeapFlags(memoryMb: number): string[] {
  const young = Math.floor(memoryMb / 10);
  return [`--max-semi-space-size=${Math.floor(young / 2)}`, `--max-old-space-size=${memoryMb - young}`];
}

/** Runs one consume through the bundle in a fresh process; its peak RSS in MiB and the answer's size. */
function consumeInFreshProcess(queue: string, body: Record<string, unknown>) {
  const event = JSON.parse(readFileSync(join(ROOT, 'events/queues-consume.json'), 'utf8'));
  event.path = `/v1/queues/${queue}/messages/consume`;
  event.requestContext.path = `/api/v1/queues/${queue}/messages/consume`;
  event.pathParameters = { queue_name: queue };
  event.requestContext.authorizer.namespace = ns.name;
  event.body = JSON.stringify(body);
  const env = {
    ...process.env, PROBE_BUNDLE: bundle, PROBE_EVENT: JSON.stringify(event), PROBE_MEMORY_MB: String(QUEUES_MEMORY_MB),
    POWERTOOLS_LOG_LEVEL: 'SILENT', NODE_OPTIONS: '',
  };
  const out = execFileSync(NODE22, [...lambdaHeapFlags(QUEUES_MEMORY_MB), join(__dirname, '../fixtures/consume-memory-probe.mjs')], { env, cwd: dir, encoding: 'utf8' });
  const r = JSON.parse(out.trim().split('\n').pop() as string);
  return { ...r, loadedMiB: r.loadedKiB / 1024, peakMiB: r.peakKiB / 1024 };
}

describe('memory of the queues function', () => {
  it.each([
    // As many as the 2 MiB budget holds (7 of 256 KiB), JSON-escaped twice.
    ['ASCII', 'a'],
    // Characters V8 keeps as two bytes, 3 bytes of UTF-8 each.
    ['two-byte', '\u20ac'],
    // Control characters: each grows 7-fold escaped twice, so few fit, while receives bring 10.
    ['escaped', '\u0001'],
  ])('a consume of 100 messages of 256 KiB (%s) peaks with a margin under QUEUES_MEMORY_MB', async (_kind, ch) => {
    const { name, topic } = await q.createOnOwnTopic();
    const payload = ch.repeat(Math.floor(MAX_PAYLOAD_BYTES / Buffer.byteLength(ch)));
    // A batch request body stays under 1 MiB; escaped payloads go one by one (30: more than a consume can return).
    if (ch === '\u0001') for (let n = 0; n < 30; n++) await q.publish(topic, { payload });
    else for (let n = 0; n < 100; n += 3) await q.publishBatch(topic, Array.from({ length: 3 }, () => ({ payload })));
    const r = consumeInFreshProcess(name, { max_messages: 100, timeout_seconds: 0 });
    console.log(`${_kind}: loaded ${r.loadedMiB.toFixed(1)} MiB, peak ${r.peakMiB.toFixed(1)} MiB (${r.hwmTrusted ? 'VmHWM' : 'sampled resident set: VmHWM inherited'}), ${r.count} messages, ${(r.bodyBytes / 1048576).toFixed(2)} MiB body, ${(r.wireBytes / 1048576).toFixed(2)} MiB sent`);
    expect(r.status).toBe(200);
    expect(r.count).toBeGreaterThan(0);
    // The answer came near the consume's budget: this is the largest consume.
    expect(r.bodyBytes).toBeGreaterThan(CONSUME_RESPONSE_BYTES / 2);
    expect(r.peakMiB).toBeLessThan(QUEUES_MEMORY_MB - MARGIN_MB);
  });
});
