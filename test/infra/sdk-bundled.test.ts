/**
 * The bundles as deployed (docs/deploy.md): the AWS SDK bundled from node_modules, the version
 * package-lock.json pins. Each loads in Node 22 outside the repository (no node_modules to fall
 * back on) and exports its handler; the only SDK modules left to the runtime are the credential
 * providers Lambda never reaches, and only behind a dynamic import(). The size budget of our own
 * code is bundles.test.ts (built without the SDK); `npm run bench:sdk` has the measurements.
 */
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { bundlingOptions } from '../../lib/constructs/bundling';
import { synthesize } from './stack';
import { expectEachLoadsWithHandler, stagedBundles } from './bundle';

const { stack } = synthesize({}, { context: { 'aws:cdk:bundling-stacks': ['**'] } });
const bundles = stagedBundles(stack);

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
    expectEachLoadsWithHandler(bundles, tmpdir());
  });
});
