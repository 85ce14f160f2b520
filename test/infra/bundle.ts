/**
 * The code bundled into a function, as esbuild builds it for the stack (ES module, SDK external),
 * unminified so tests can read what it calls: the tables it names (iam.test.ts), the SQS commands
 * it sends (service-queues.test.ts).
 */
import { buildSync } from 'esbuild';
import { join } from 'node:path';
import type { FunctionId } from '../../lib/table-access';

const cache = new Map<FunctionId, string>();

export function bundleText(id: FunctionId): string {
  let text = cache.get(id);
  if (text === undefined) {
    const entry = join(__dirname, '../../lambda/handlers', `${id.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}.ts`);
    text = buildSync({
      entryPoints: [entry], bundle: true, write: false, platform: 'node', format: 'esm', outfile: 'index.mjs',
      mainFields: ['module', 'main'], external: ['@aws-sdk/*'], logLevel: 'silent',
    }).outputFiles[0].text;
    cache.set(id, text);
  }
  return text;
}
