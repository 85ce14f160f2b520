/**
 * What schema enforcement costs a publish in CPU (docs/catalog.md): loading the validators module
 * (Ajv with ajv-formats) once per container, compiling one event type's schema once per version,
 * and validating one payload (JSON.parse included), for a ~1 KiB order payload.
 *
 *   npx tsx bench/catalog-validation.ts
 */
import { performance } from 'node:perf_hooks';

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

async function main() {
  let t = performance.now();
  const v = await import('../lambda/catalog/validators');
  v.schemaProblem({ type: 'object' }, undefined); // builds the container's Ajv (with formats)
  const load = performance.now() - t;
  t = performance.now();
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
    `payload ${Buffer.byteLength(payload)} bytes\n` +
      `load validators module and build Ajv (once per container): ${load.toFixed(0)} ms\n` +
      `compile one schema (once per event type version per container): ${compile.toFixed(2)} ms\n` +
      `parse + validate one payload: ${perMessage.toFixed(1)} µs\n`,
  );
}
void main();
