/**
 * The bundles as deployed (issue 15 item 7): the AWS SDK bundled from node_modules, the version
 * package-lock.json pins. Each loads in Node 22 outside the repository (no node_modules to fall
 * back on) and exports its handler; the only SDK modules left to the runtime are the credential
 * providers Lambda never reaches, and only behind a dynamic import(). The size budget of our own
 * code is bundles.test.ts (built without the SDK); `npm run bench:sdk` has the measurements.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AssetStaging } from 'aws-cdk-lib';
import { TABLES } from '../../lambda/storage/tables';
import { bundlingOptions } from '../../lib/constructs/functions';
import { synthesize } from './stack';

const NODE22 = join(__dirname, '../../node_modules/node/bin/node');
const { stack } = synthesize({}, { context: { 'aws:cdk:bundling-stacks': ['**'] } });
const bundles = [...stack.functions.all.entries()].map(([id, fn]) => {
  const staging = fn.node.findAll().find((c): c is AssetStaging => c instanceof AssetStaging);
  if (!staging) throw new Error(`no asset of ${id}`);
  return { id, file: join(staging.absoluteStagedPath, 'index.mjs') };
});

/** Module specifiers of the bundle's static imports and of its dynamic import() calls. */
function imports(code: string): { statics: string[]; dynamics: string[] } {
  const statics = [...code.matchAll(/(?:^|[;}\s])import\s*(?:[\w$*{},\s]+from\s*)?["']([^"']+)["']/g)].map((m) => m[1]);
  const dynamics = [...code.matchAll(/import\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]);
  return { statics, dynamics };
}

describe('bundles with the AWS SDK bundled (the default)', () => {
  it.each(bundles.map((b) => [b.id, b]))('%s imports no SDK module statically, only the never-reached credential providers dynamically', (_id, b) => {
    const { statics, dynamics } = imports(readFileSync(b.file, 'utf8'));
    expect(statics.filter((s) => !s.startsWith('node:'))).toEqual([]);
    const external = new Set(bundlingOptions().externalModules);
    for (const d of dynamics.filter((s) => s.startsWith('@aws-sdk/') || s.startsWith('@smithy/'))) expect(external).toContain(d);
  });

  it('loads every bundle in Node 22 as an ES module exporting `handler`, with no node_modules to resolve from', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sdk-bundled-'));
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
          cwd: dir,
          encoding: 'utf8',
        });
        expect({ id: b.id, handler: out.trim() }).toEqual({ id: b.id, handler: 'function' });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
