/**
 * Cold-start import time of every Lambda function (docs/performance.md): the real bundles, built by
 * the CDK stack's own bundling (minified ESM, the AWS SDK bundled as the stack does by default),
 * each imported in a fresh Node 22 process that times `await import(bundle)`: module parsing,
 * evaluation and the top-level work of the handler (clients, config), i.e. the part of a Lambda
 * cold start that the code controls. The runtime's own start (process, sandbox) is not in it.
 *
 * Every run imports every function once, round robin, so a busy moment of the machine spreads
 * over all functions instead of skewing one.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App, AssetStaging } from 'aws-cdk-lib';
import { MessagingStack } from '../lib/messaging-stack';
import { lambdaLikeEnv, latencyStats, type LatencyStats } from './harness';

const ROOT = join(import.meta.dirname, '..');
/** The Node 22 of the `node` devDependency: the Lambda runtime's major version. */
const NODE22 = join(ROOT, 'node_modules/node/bin/node');

export interface ColdStartRow {
  id: string;
  kb: number;
  /** The whole import: the AWS SDK modules the bundle uses, then the bundle. */
  importMs: LatencyStats;
  /** The bundle alone, with its SDK modules already loaded: what our code and its size cost. */
  bundleMs: LatencyStats;
}

/** Builds every function's bundle as `cdk synth` does; returns each bundle file and its size. */
function buildBundles(): { id: string; file: string; kb: number }[] {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': ['**'] } });
  const stack = new MessagingStack(app, 'ColdStart', {});
  return [...stack.functions.all.entries()].map(([id, fn]) => {
    const staging = fn.node.findAll().find((c): c is AssetStaging => c instanceof AssetStaging);
    if (!staging) throw new Error(`no asset of ${id}`);
    const file = join(staging.absoluteStagedPath, 'index.mjs');
    return { id, file, kb: Math.round((statSync(file).size / 1024) * 10) / 10 };
  });
}


/** The AWS SDK packages a bundle imports (external, so they stay import statements). */
const sdkImports = (file: string) => [...new Set([...readFileSync(file, 'utf8').matchAll(/from\s*"(@aws-sdk\/[^"]+)"/g)].map((m) => m[1]))];

/**
 * One fresh process: imports the bundle's SDK packages, then the bundle; returns the milliseconds
 * of each step. Specifiers resolve from `cwd` (inside the repository, so from node_modules).
 */
function importOnce(file: string, sdk: string[], env: Record<string, string>, cwd: string): { sdkMs: number; bundleMs: number } {
  const script = [
    'const t0 = performance.now();',
    `await Promise.all(${JSON.stringify(sdk)}.map((s) => import(s)));`,
    'const t1 = performance.now();',
    `const m = await import(${JSON.stringify(pathToFileURL(file).href)});`,
    'const t2 = performance.now();',
    "if (typeof m.handler !== 'function') throw new Error('no handler');",
    'process.stdout.write(JSON.stringify({ sdkMs: t1 - t0, bundleMs: t2 - t1 }));',
  ].join('\n');
  return JSON.parse(execFileSync(NODE22, ['--input-type=module', '-e', script], { env, cwd, encoding: 'utf8' })) as { sdkMs: number; bundleMs: number };
}

export async function benchColdStart({ runs = 7, log = () => undefined }: { runs?: number; log?: (l: string) => void } = {}): Promise<ColdStartRow[]> {
  log('building the Lambda bundles (cdk bundling)');
  const bundles = buildBundles();
  // Inside the repository, so the bundles' external @aws-sdk/* imports resolve from node_modules
  // as they resolve from the runtime's SDK in Lambda.
  mkdirSync(join(ROOT, 'node_modules/.cache'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, 'node_modules/.cache/cold-start-'));
  try {
    const copies = bundles.map((b) => {
      const file = join(dir, `${b.id}.mjs`);
      copyFileSync(b.file, file);
      return { ...b, file, sdk: sdkImports(file), total: [] as number[], alone: [] as number[] };
    });
    const env = lambdaLikeEnv();
    for (let r = 0; r < runs; r++) {
      log(`cold-start imports, round ${r + 1} of ${runs}`);
      for (const c of copies) {
        const t = importOnce(c.file, c.sdk, env, dir);
        c.total.push(t.sdkMs + t.bundleMs);
        c.alone.push(t.bundleMs);
      }
    }
    return copies.map((c) => ({ id: c.id, kb: c.kb, importMs: latencyStats(c.total), bundleMs: latencyStats(c.alone) }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function coldStartTable(rows: ColdStartRow[], runs: number): string {
  return [
    '| function | bundle KB (minified) | import p50 ms (SDK + bundle) | bundle alone p50 ms | bundle alone max ms |',
    '|---|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.id} | ${r.kb} | ${r.importMs.p50Ms.toFixed(1)} | ${r.bundleMs.p50Ms.toFixed(1)} | ${r.bundleMs.p99Ms.toFixed(1)} |`),
    '',
    `Each bundle imported in ${runs} fresh Node 22 processes, timed inside the process: first the AWS SDK packages it imports from outside the bundle, if any (with the stack's default \`awsSdk: 'bundled'\` the SDK is inside the bundle and its size, so both columns time the same import; with \`awsSdk: 'runtime'\` they load from node_modules here), then the bundle itself (parse, evaluate, top-level clients and config). The runtime's own start (process, sandbox) is not included.`,
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const runs = Number(process.argv[2] ?? 7);
  benchColdStart({ runs, log: (l) => console.error(l) })
    .then((rows) => console.log(coldStartTable(rows, runs)))
    .catch((e) => {
      console.error(e);
      process.exit(1);
    });
}
