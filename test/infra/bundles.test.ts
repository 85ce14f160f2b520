/**
 * The real bundles, as `cdk synth` builds them (local esbuild): each loads in Node 22 and exports
 * its handler, none carries the AWS SDK (the runtime's SDK v3 serves it, see AwsSdkSource), and
 * each stays within the size budget. Prints the size of every bundle.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AssetStaging } from 'aws-cdk-lib';
import { TABLES } from '../../lambda/storage/tables';
import type { FunctionId } from '../../lib/table-access';
import { synthesize } from './stack';

const ROOT = join(__dirname, '../..');
const NODE22 = join(ROOT, 'node_modules/node/bin/node');

/** Minified bundle size target (issue 2: "Handler bundles are small"). */
const BUDGET_KB = 300;

/**
 * Known to exceed the budget, with a ceiling so they do not grow further unnoticed. Remove an
 * entry once its bundle is under the budget.
 * - undici (lambda/adapters/http-delivery.ts, required by issue 5 as the delivery client) is
 *   CommonJS and does not tree-shake: ~715 KB of the webhooks, delivery and attempt bundles.
 */
const OVER_BUDGET_KB: Partial<Record<FunctionId, number>> = {
  webhooks: 950, // undici
  webhookDelivery: 950, // undici
  webhookAttempt: 950, // undici
};

// The budget counts our own code (issue 15 item 7): bundles built without the AWS SDK, which the
// deployed functions carry on top (awsSdk 'bundled', the default; sdk-bundled.test.ts loads those).
const { stack } = synthesize({ awsSdk: 'runtime' }, { context: { 'aws:cdk:bundling-stacks': ['**'] } });

const bundles = [...stack.functions.all.entries()].map(([id, fn]) => {
  const staging = fn.node.findAll().find((c): c is AssetStaging => c instanceof AssetStaging);
  if (!staging) throw new Error(`no asset of ${id}`);
  const file = join(staging.absoluteStagedPath, 'index.mjs');
  return { id, file, kb: statSync(file).size / 1024 };
});

describe('Lambda bundles', () => {
  afterAll(() => {
    const lines = bundles.map((b) => `${b.id.padEnd(16)} ${b.kb.toFixed(1).padStart(8)} KB`);
    process.stdout.write(`\nMinified bundle sizes (index.mjs):\n${lines.join('\n')}\n`);
  });

  it.each(bundles.map((b) => [b.id, b]))('%s is within the size budget', (id, b) => {
    expect(b.kb).toBeLessThan(OVER_BUDGET_KB[id as FunctionId] ?? BUDGET_KB);
  });

  it.each(bundles.map((b) => [b.id, b]))('%s bundles no AWS SDK code (the runtime provides it)', (_id, b) => {
    const code = readFileSync(b.file, 'utf8');
    // A bundled SDK brings Smithy's middleware stack and its user-agent string.
    expect(code).not.toMatch(/@smithy\/|aws-sdk-js\/|resolveAwsSdkSigV4Config/);
  });

  it('loads every bundle in Node 22 as an ES module exporting `handler`', () => {
    // Inside the repository, so the external @aws-sdk/* imports resolve as the runtime's would.
    mkdirSync(join(ROOT, 'node_modules/.cache'), { recursive: true });
    const dir = mkdtempSync(join(ROOT, 'node_modules/.cache/bundles-'));
    try {
      const env: Record<string, string> = {
        PATH: process.env.PATH ?? '',
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'test',
        AWS_SECRET_ACCESS_KEY: 'test',
        ...Object.fromEntries(Object.values(TABLES).map((t) => [t.envVar, t.localName])),
      };
      for (const b of bundles) {
        const file = join(dir, `${b.id}.mjs`);
        copyFileSync(b.file, file);
        const out = execFileSync(NODE22, ['--input-type=module', '-e', `const m = await import(${JSON.stringify(`file://${file}`)}); console.log(typeof m.handler);`], {
          env,
          encoding: 'utf8',
        });
        expect({ id: b.id, handler: out.trim() }).toEqual({ id: b.id, handler: 'function' });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
