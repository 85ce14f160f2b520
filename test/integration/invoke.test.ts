/**
 * `npm run invoke` and the sample events of events/: every sample runs through its function
 * against DynamoDB Local (in a fresh namespace, so runs never meet), and the program prints the
 * handler's result as JSON on stdout.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FUNCTIONS, functionId, invoke, main } from '../../bin/invoke';
import { applySeed, DEFAULT_SEED } from '../../local/seed';
import { createTestNamespace } from '../fixtures/namespace';

jest.setTimeout(90_000);

const ROOT = resolve(__dirname, '../..');
const EVENTS = join(ROOT, 'events');

/** The samples in the order a new user would try them (a queue before publishing to it). */
const ORDER = [
  'authorizer', 'namespace-get', 'queues-create', 'queues-list', 'streams-create', 'subscriptions-create', 'publish', 'publish-batch',
  'queues-consume', 'webhooks-list', 'webhook-delivery', 'webhook-attempt', 'sweeper',
];

/** The function of a sample: the longest handler module name its file name starts with. */
const functionOf = (sample: string) => {
  const modules = Object.values(FUNCTIONS).map((f) => f.module).sort((a, b) => b.length - a.length);
  return functionId(modules.find((m) => sample === m || sample.startsWith(`${m}-`)) ?? sample);
};

describe('events/ samples', () => {
  it('lists every sample file in the run order', () => {
    const files = readdirSync(EVENTS).filter((f) => f.endsWith('.json')).map((f) => f.replace(/\.json$/, ''));
    expect(files.sort()).toEqual([...ORDER].sort());
  });

  it('runs every sample through its function with the answer a working service gives', async () => {
    const ns = await createTestNamespace('inv');
    const results: Record<string, any> = {};
    for (const sample of ORDER) {
      // The samples name namespace `dev` and key `dev-key` (npm start's defaults): here a fresh namespace.
      const text = readFileSync(join(EVENTS, `${sample}.json`), 'utf8').replace(/(\\?"namespace\\?": \\?")dev(\\?")/g, `$1${ns.name}$2`).replace(/dev-key/g, ns.key);
      results[sample] = await invoke(functionOf(sample), JSON.parse(text));
    }
    for (const sample of ORDER.filter((s) => functionOf(s) in { namespace: 1, publish: 1, queues: 1, streams: 1, subscriptions: 1, webhooks: 1 })) {
      const r = results[sample];
      expect({ sample, status: r.statusCode, success: JSON.parse(r.body).success }).toEqual({ sample, status: expect.any(Number), success: true });
      expect(r.statusCode).toBeLessThan(300);
    }
    expect(JSON.parse(results['queues-consume'].body).data.count).toBe(3);
    expect(results.authorizer).toMatchObject({ policyDocument: { Statement: [{ Effect: 'Allow' }] }, context: { namespace: ns.name } });
    expect(results['webhook-delivery']).toEqual({ batchItemFailures: [] });
    expect(results['webhook-attempt']).toMatchObject({ outcome: 'dropped' });
    expect(results.sweeper).toEqual(expect.any(Object));
  });
});

describe('npm run invoke', () => {
  it('prints the result of a handler as JSON on stdout (npm run -s invoke)', async () => {
    await applySeed(DEFAULT_SEED);
    const r = spawnSync('npm', ['run', '-s', 'invoke', '--', 'namespace', 'events/namespace-get.json'], { cwd: ROOT, env: process.env, encoding: 'utf8', timeout: 90_000 });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: expect.stringContaining('invoking namespace (lambda/handlers/namespace.ts)') });
    const out = JSON.parse(r.stdout);
    expect(out.statusCode).toBe(200);
    expect(JSON.parse(out.body).data.name).toBe('dev');
  });

  it('keeps the handler\'s own log lines off stdout, so `npm run -s invoke ... | jq` parses (the sweeper logs "sweep done")', async () => {
    const r = spawnSync('npm', ['run', '-s', 'invoke', '--', 'sweeper', 'events/sweeper.json'], { cwd: ROOT, env: { ...process.env, POWERTOOLS_LOG_LEVEL: 'INFO' }, encoding: 'utf8', timeout: 120_000 });
    expect(r.status).toBe(0);
    expect(() => JSON.parse(r.stdout)).not.toThrow();
    expect(r.stderr).toContain('sweep done');
  });

  it('answers 2 with the list of functions for an unknown one, and for a missing event file', async () => {
    const err: string[] = [];
    expect(await main(['frobnicate', 'events/namespace-get.json'], () => undefined, (s) => err.push(s))).toBe(2);
    expect(err.join('')).toContain('unknown function "frobnicate"; one of namespace, publish');
    expect(await main(['namespace', 'events/nope.json'], () => undefined, (s) => err.push(s))).toBe(2);
    expect(err.join('')).toContain('cannot read the event events/nope.json');
  });
});
