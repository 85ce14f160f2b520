/**
 * What schema enforcement costs (docs/design/0002-catalog-enforcement.md), on the validators module as the functions load
 * it (lambda/catalog/load-validators.ts): built with the stack's esbuild settings into a
 * temporary directory, then timed in fresh Node processes (5 cold starts): its import, the first
 * compile on a publish (builds the container's Ajv), the first meta-schema check on a schema
 * write; and in this process: compiling one schema (once per event type version per container)
 * and parsing plus validating one ~660-byte order payload (every message).
 *
 *   npx tsx bench/catalog-validation.ts
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildSync } from 'esbuild';
import { bundlingOptions } from '../lib/constructs/bundling';

const ROOT = join(import.meta.dirname, '..');
const schema = {
  type: 'object',
  required: ['id', 'customer', 'lines'],
  properties: {
    id: { type: 'integer', minimum: 1 },
    customer: { type: 'object', required: ['email'], properties: { email: { type: 'string', format: 'email' }, name: { type: 'string', maxLength: 200 } } },
    lines: { type: 'array', minItems: 1, maxItems: 100, items: { type: 'object', required: ['sku', 'qty'], properties: { sku: { type: 'string', pattern: '^[A-Z0-9-]{3,32}$' }, qty: { type: 'integer', minimum: 1 } } } },
    placed_at: { type: 'string', format: 'date-time' },
  },
};
const payload = JSON.stringify({
  id: 42,
  customer: { email: 'ada@example.com', name: 'Ada Lovelace' },
  lines: Array.from({ length: 20 }, (_, i) => ({ sku: `SKU-${1000 + i}`, qty: 1 + (i % 3) })),
  placed_at: '2026-11-27T10:00:00.000Z',
});

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function coldStarts(runs = 5) {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-bench-'));
  try {
    const file = join(dir, 'catalog-validators.mjs');
    buildSync({ entryPoints: [join(ROOT, 'lambda/catalog/validators.ts')], bundle: true, platform: 'node', format: 'esm', target: 'node22', minify: true, mainFields: ['module', 'main'], outfile: file, banner: { js: bundlingOptions().banner ?? '' }, logLevel: 'silent' });
    const probe = join(dir, 'probe.mjs');
    writeFileSync(
      probe,
      `const t0 = performance.now(); const m = await import(${JSON.stringify(file)}); const t1 = performance.now();
       m.cacheValidator('k', ${JSON.stringify(schema)}); const t2 = performance.now();
       m.schemaProblem(${JSON.stringify(schema)}, undefined); const t3 = performance.now();
       console.log(JSON.stringify([t1 - t0, t2 - t1, t3 - t2]));`,
    );
    const samples = Array.from({ length: runs }, () => JSON.parse(execFileSync(join(ROOT, 'node_modules/node/bin/node'), [probe], { encoding: 'utf8' })) as number[]);
    return { import: median(samples.map((s) => s[0])), firstCompile: median(samples.map((s) => s[1])), firstMeta: median(samples.map((s) => s[2])) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  const cold = coldStarts();
  const v = await import('../lambda/catalog/validators');
  v.cacheValidator('warm', schema);
  let t = performance.now();
  const n = 200;
  for (let i = 0; i < n; i++) v.cacheValidator(`bench\u0000t\u0000${i}`, { ...schema, title: `v${i}` });
  const compile = (performance.now() - t) / n;
  const validate = v.cacheValidator('bench\u0000t\u0000x', schema);
  if (v.payloadViolation(validate, payload) !== undefined) throw new Error('the bench payload should be valid');
  const m = 100_000;
  t = performance.now();
  for (let i = 0; i < m; i++) v.payloadViolation(validate, payload);
  const perMessage = ((performance.now() - t) / m) * 1000;
  process.stdout.write(
    `validators module (medians of 5 cold Node processes): import ${cold.import.toFixed(0)} ms; ` +
      `first compile on a publish (builds Ajv) ${cold.firstCompile.toFixed(0)} ms; first meta-schema check on a write ${cold.firstMeta.toFixed(0)} ms\n` +
      `compile one schema (once per event type version per container): ${compile.toFixed(2)} ms\n` +
      `parse + validate one ${Buffer.byteLength(payload)}-byte payload: ${perMessage.toFixed(1)} µs\n`,
  );
}
void main();
