/**
 * The code bundled into a function, as esbuild builds it for the stack (ES module, SDK external),
 * unminified so tests can read what it calls: the tables it names (iam.test.ts), the SQS commands
 * it sends (service-queues.test.ts).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { AssetStaging } from 'aws-cdk-lib';
import { buildSync } from 'esbuild';
import type { FunctionId } from '../../lib/table-access';
import { TABLES } from '../../lambda/core/storage/tables';
import type { MessagingStack } from '../../lib/messaging-stack';

/** The Node 22 of the `node` devDependency: the Lambda runtime's major version. */
const NODE22 = join(__dirname, '../../node_modules/node/bin/node');

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

/** Every function's bundle as the stack staged it (`cdk synth` with bundling), by function id. */
export function stagedBundles(stack: MessagingStack): { id: string; file: string }[] {
  return [...stack.functions.all.entries()].map(([id, fn]) => {
    const staging = fn.node.findAll().find((c): c is AssetStaging => c instanceof AssetStaging);
    if (!staging) throw new Error(`no asset of ${id}`);
    return { id, file: join(staging.absoluteStagedPath, 'index.mjs') };
  });
}

/**
 * Imports each bundle in a fresh Node 22 process, copied into a new folder under `parent` (which
 * decides what its imports can resolve from), with a function's environment, and expects it to
 * export a `handler` function.
 */
export function expectEachLoadsWithHandler(bundles: { id: string; file: string }[], parent: string): void {
  const dir = mkdtempSync(join(parent, 'bundles-'));
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
      const out = execFileSync(NODE22, ['--input-type=module', '-e', `const m = await import(${JSON.stringify(`file://${file}`)}); console.log(typeof m.handler);`], { env, cwd: dir, encoding: 'utf8' });
      expect({ id: b.id, handler: out.trim() }).toEqual({ id: b.id, handler: 'function' });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
