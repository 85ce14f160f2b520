/**
 * The real bundles, as `cdk synth` builds them (local esbuild): each loads in Node 22 and exports
 * its handler, none carries the AWS SDK (the runtime's SDK v3 serves it, see AwsSdkSource), and
 * each stays within the size budget. Prints the size of every bundle.
 */
import { mkdirSync, statSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { synthesize } from './stack';
import { LAZY_MODULES } from '../../lib/constructs/bundling';
import type { FunctionId } from '../../lib/table-access';
import { expectEachLoadsWithHandler, stagedBundles } from './bundle';
import { today, writeSection } from '../../bench/figures';

const ROOT = join(__dirname, '../..');

/**
 * Minified bundle size budget of every function, without exceptions (docs/performance.md):
 * cold-start import time grows with the code a function loads. A dependency that breaks it needs a
 * smaller alternative (webhook delivery uses node:https, validation zod/mini), not an exception
 * here.
 */
const BUDGET_KB = 230;
// 200 KB until 2026-11-29, when publish reached 201.4 KB with our own code alone (reservation
// records of the logs and split rate counters: +5.5 KB); no dependency grew. 210 KB until
// 2026-11-30, when webhook delivery reached 212.2 KB with our own code alone (the retry
// hand-off's once-only take, DescribeExecution's answers, the on_failure hook's claim); no
// dependency grew. 220 KB until 2026-12-02, when webhook delivery reached 224.1 KB with our own
// code alone (deliveries waiting for an in-flight place and its hand-off, the rate's version); no
// dependency grew. 230 KB keeps the budget a check on dependencies.

// The budget counts our own code: bundles built without the AWS SDK, which the
// deployed functions carry on top (awsSdk 'bundled', the default; sdk-bundled.test.ts loads those).
const { stack } = synthesize({ awsSdk: 'runtime' }, { context: { 'aws:cdk:bundling-stacks': ['**'] } });

const bundles = stagedBundles(stack).map((b) => ({ ...b, kb: statSync(b.file).size / 1024 }));

describe('Lambda bundles', () => {
  afterAll(() => {
    const lines = bundles.map((b) => `${b.id.padEnd(16)} ${b.kb.toFixed(1).padStart(8)} KB`);
    process.stdout.write(`\nMinified bundle sizes (index.mjs):\n${lines.join('\n')}\n`);
    // MSG_WRITE_FIGURES=1 stores the sizes as the `bundles` section of docs/figures.json, which
    // docs/performance.md shows (bench/figures.ts); a plain test run only prints them.
    if (process.env.MSG_WRITE_FIGURES === '1') {
      writeSection(
        'bundles',
        {
          command: 'MSG_WRITE_FIGURES=1 npx jest --selectProjects infra --runTestsByPath test/infra/bundles.test.ts',
          measured: today(),
          environment: `esbuild minified, awsSdk runtime (the AWS SDK left out), budget ${BUDGET_KB} KB`,
          source: 'test/infra/bundles.test.ts',
          markdown: ['| function | minified KB without the AWS SDK |', '|---|---:|', ...bundles.map((b) => `| ${b.id} | ${b.kb.toFixed(1)} |`)].join('\n'),
        },
        ROOT,
      );
    }
  });

  it.each(bundles.map((b) => [b.id, b]))(`%s is at most ${BUDGET_KB} KB minified`, (_id, b) => {
    expect(b.kb).toBeLessThanOrEqual(BUDGET_KB);
  });

  // Modules loaded on first need (lambda/catalog/load-validators.ts) sit beside index.mjs, each
  // within the same budget, and load in Node as the function's import() will load them.
  const lazy = bundles.flatMap((b) => (LAZY_MODULES[b.id as FunctionId] ?? []).map((m) => [`${b.id} ${m.file}`, join(b.file, '..', m.file)] as const));
  it('builds the lazily loaded modules of the functions that have them', () => {
    expect(lazy.map(([name]) => name).sort()).toEqual(['catalog catalog-validators.mjs', 'publish catalog-validators.mjs']);
  });
  // The bundled module runs patterns on V8's linear-time engine (lambda/catalog/linear-regexp.ts):
  // it refuses a backreference, and a*a*a*b against 50,000 a's answers (backtracking, it would not).
  const probe = [
    "console.log(typeof m.schemaProblem, typeof m.payloadViolation, m.schemaProblem({ pattern: '^(a)\\\\1$' })?.field,",
    "m.payloadViolation(m.cacheValidator('k', { pattern: 'a*a*a*b' }), JSON.stringify('a'.repeat(50000)))?.keyword)",
  ].join(' ');
  it.each(lazy)(`%s is at most ${BUDGET_KB} KB minified and exports the validators`, async (_name, file) => {
    expect(statSync(file).size / 1024).toBeLessThanOrEqual(BUDGET_KB);
    const out = execFileSync(join(ROOT, 'node_modules/node/bin/node'), ['--input-type=module', '-e', `const m = await import(${JSON.stringify(file)}); ${probe}`], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(out.trim()).toBe('function function schema pattern');
  });

  it.each(bundles.map((b) => [b.id, b]))('%s bundles no AWS SDK code (the runtime provides it)', (_id, b) => {
    const code = readFileSync(b.file, 'utf8');
    // A bundled SDK brings Smithy's middleware stack and its user-agent string.
    expect(code).not.toMatch(/@smithy\/|aws-sdk-js\/|resolveAwsSdkSigV4Config/);
  });

  it('depends on one copy of each Powertools package, so a bundle carries one copy of commons', () => {
    // Two versions of a Powertools package would each bring their own @aws-lambda-powertools/commons.
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version: string }> };
    const copies = Object.entries(lock.packages).filter(([path]) => /(^|\/)node_modules\/@aws-lambda-powertools\/[^/]+$/.test(path));
    const byName = new Map<string, string[]>();
    for (const [path, { version }] of copies) {
      const name = path.slice(path.lastIndexOf('@aws-lambda-powertools/'));
      byName.set(name, [...(byName.get(name) ?? []), version]);
    }
    expect([...byName.values()].filter((versions) => versions.length > 1)).toEqual([]);
    expect(byName.get('@aws-lambda-powertools/commons')).toHaveLength(1);
  });

  it('loads every bundle in Node 22 as an ES module exporting `handler`', () => {
    // Inside the repository, so the external @aws-sdk/* imports resolve as the runtime's would.
    mkdirSync(join(ROOT, 'node_modules/.cache'), { recursive: true });
    expectEachLoadsWithHandler(bundles, join(ROOT, 'node_modules/.cache'));
  });
});
