/**
 * `npm run bench:sdk`: where should the functions' AWS SDK come from (docs/deploy.md)? Builds
 * every function's bundle both ways, with the options of lib/constructs/bundling.ts
 * `bundlingOptions` (esbuild, minified ESM for Node 22):
 *
 * - `runtime`: `@aws-sdk/*` external, loaded at run time from the SDK the Lambda runtime ships
 *   (here: the one in node_modules, the same package layout);
 * - `bundled`: the SDK from package-lock.json, tree-shaken into the bundle.
 *
 * and reports per function the bundle size, the size of our own code (the bundle less every
 * node_modules input, from esbuild's metafile) and the cold import time: a fresh Node 22 process
 * per sample timing `await import(bundle)` (module loading, parsing and top-level code: what a
 * cold start pays before the handler runs), median of `--samples` (default 9).
 *
 * Prints a Markdown table; `--json` prints the raw numbers; `--figures` also stores the table as the
 * `sdk-source` section of docs/figures.json and re-renders the docs' blocks (bench/figures.ts).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { build, type Metafile } from 'esbuild';
import { bundlingOptions, type AwsSdkSource } from '../lib/constructs/bundling';
import { TABLE_ACCESS, type FunctionId } from '../lib/table-access';
import { lambdaLikeEnv } from './harness';
import { today, writeSection } from './figures';

const ROOT = join(import.meta.dirname, '..');
const NODE22 = join(ROOT, 'node_modules/node/bin/node');
const { values } = parseArgs({ options: { samples: { type: 'string', default: '9' }, json: { type: 'boolean', default: false }, figures: { type: 'boolean', default: false } } });
const SAMPLES = Number(values.samples);

const kebab = (id: string) => id.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

interface Measured {
  id: FunctionId;
  sdk: AwsSdkSource;
  kb: number;
  ownKb: number;
  sdkKb: number;
  importMs: number;
  importCpuMs: number;
}

/** Our own code: the output bytes that come from inputs outside node_modules. */
function split(meta: Metafile): { ownKb: number; sdkKb: number } {
  let own = 0;
  let sdk = 0;
  for (const out of Object.values(meta.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(out.inputs)) {
      if (!input.includes('node_modules/')) own += bytesInOutput;
      if (/node_modules\/(@aws-sdk|@smithy|@aws-crypto)\//.test(input)) sdk += bytesInOutput;
    }
  }
  return { ownKb: own / 1024, sdkKb: sdk / 1024 };
}

async function bundle(id: FunctionId, sdk: AwsSdkSource, dir: string): Promise<{ file: string; meta: Metafile }> {
  const o = bundlingOptions(sdk);
  const file = join(dir, `${id}-${sdk}.mjs`);
  const result = await build({
    entryPoints: [join(ROOT, 'lambda/handlers', `${kebab(id)}.ts`)],
    outfile: file,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: o.target,
    minify: o.minify,
    sourcemap: false,
    mainFields: o.mainFields,
    external: o.externalModules,
    banner: { js: o.banner ?? '' },
    metafile: true,
    logLevel: 'error',
  });
  return { file, meta: result.metafile };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Median wall time and CPU time (user + system, less disturbed by other processes on a busy
 * machine) of `await import(file)` in fresh Node 22 processes.
 */
function importTimes(file: string): { importMs: number; importCpuMs: number } {
  const env = lambdaLikeEnv();
  const script = [
    'const c = process.cpuUsage(); const t = performance.now();',
    `await import(${JSON.stringify(`file://${file}`)});`,
    'const wall = performance.now() - t; const cpu = process.cpuUsage(c);',
    'console.log(JSON.stringify([wall, (cpu.user + cpu.system) / 1000]));',
  ].join(' ');
  const samples = Array.from({ length: SAMPLES }, () => JSON.parse(execFileSync(NODE22, ['--input-type=module', '-e', script], { env, encoding: 'utf8' })) as [number, number]);
  return { importMs: median(samples.map((x) => x[0])), importCpuMs: median(samples.map((x) => x[1])) };
}

async function main() {
  // Inside the repository, so a runtime bundle's external @aws-sdk/* imports resolve.
  mkdirSync(join(ROOT, 'node_modules/.cache'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, 'node_modules/.cache/sdk-bench-'));
  const rows: Measured[] = [];
  try {
    for (const id of Object.keys(TABLE_ACCESS) as FunctionId[]) {
      for (const sdk of ['runtime', 'bundled'] as const) {
        const { file, meta } = await bundle(id, sdk, dir);
        rows.push({ id, sdk, kb: statSync(file).size / 1024, ...split(meta), ...importTimes(file) });
        process.stderr.write(`bench:sdk ${id} ${sdk} done\n`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (values.json) {
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return;
  }
  const by = (id: FunctionId, sdk: AwsSdkSource) => rows.find((r) => r.id === id && r.sdk === sdk)!;
  const f = (n: number) => n.toFixed(1);
  const environment = `${process.platform} ${process.arch}, Node 22, median of ${SAMPLES} cold imports; load average ${(await import('node:os')).loadavg()[0].toFixed(1)}`;
  const lines = [
    '| function | own code KB | runtime SDK: bundle KB | import ms (CPU ms) | bundled SDK: bundle KB | of it SDK KB | import ms (CPU ms) |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...(Object.keys(TABLE_ACCESS) as FunctionId[]).map((id) => {
      const [r, b] = [by(id, 'runtime'), by(id, 'bundled')];
      return `| ${id} | ${f(b.ownKb)} | ${f(r.kb)} | ${f(r.importMs)} (${f(r.importCpuMs)}) | ${f(b.kb)} | ${f(b.sdkKb)} | ${f(b.importMs)} (${f(b.importCpuMs)}) |`;
    }),
    '',
    `Median over all functions: runtime SDK ${f(median(rows.filter((r) => r.sdk === 'runtime').map((r) => r.importMs)))} ms (CPU ${f(median(rows.filter((r) => r.sdk === 'runtime').map((r) => r.importCpuMs)))} ms), ` +
      `bundled SDK ${f(median(rows.filter((r) => r.sdk === 'bundled').map((r) => r.importMs)))} ms (CPU ${f(median(rows.filter((r) => r.sdk === 'bundled').map((r) => r.importCpuMs)))} ms).`,
  ];
  process.stdout.write(`Measured with \`npm run bench:sdk\` on ${today()} (${environment}).\n\n${lines.join('\n')}\n`);
  if (values.figures) {
    const pages = writeSection('sdk-source', { command: 'npm run bench:sdk -- --figures', measured: today(), environment, source: 'bench/sdk-source.ts', markdown: lines.join('\n') }, ROOT);
    process.stderr.write(`bench:sdk: docs/figures.json sdk-source stored; pages re-rendered: ${pages.join(', ') || 'none changed'}\n`);
  }
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack}\n`);
  process.exit(1);
});
