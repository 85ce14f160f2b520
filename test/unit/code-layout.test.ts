/**
 * The code's shape, checked by the tools made for it, as part of `npm test`:
 * - dependency-cruiser (`.dependency-cruiser.cjs`, `npm run lint:deps`): imports point down only,
 *   no cycles, the pure rules (core/rules/, a feature's rules) import no AWS and only the Node
 *   built-ins that compute, core imports only core and packages, a feature is imported only through
 *   its interface (by bench/ too) and by another only at the files MEETS names it for, lambda/ never imports
 *   local/ or test/, the examples import only the typed client and packages;
 * - knip (`knip.json`, `npm run lint:unused`): no unused files, exports (entry files' too) or dependencies.
 * Each prints what it found, which is what the failure shows. And what the tools cannot see:
 * - every folder of lambda/ is a feature of INTERFACES or one of core, handlers, api-docs and console
 *   (a folder of no feature would escape every feature rule);
 * - no import under lambda/ takes a template or a computed path, which dependency-cruiser cannot
 *   follow (https://github.com/sverweij/dependency-cruiser/blob/main/doc/faq.md), but for the
 *   files listed in COMPUTED_IMPORTS with why;
 * - docs/architecture.md's feature table lists, as each feature's interface, the files of INTERFACES.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

jest.setTimeout(120_000);

const ROOT = join(__dirname, '../..');

function npmScript(name: string) {
  const r = spawnSync('npm', ['run', '-s', name], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' } });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

it('every import keeps the layering rules (npm run lint:deps)', () => {
  const r = npmScript('lint:deps');
  expect(r.output).toMatch(/no dependency violations found/);
  expect(r.status).toBe(0);
});

it('nothing is unused: files, exports, dependencies (npm run lint:unused)', () => {
  const r = npmScript('lint:unused');
  expect(r.output.trim()).toBe('');
  expect(r.status).toBe(0);
});

/** Each feature's interface files, as the `<feature>-through-its-interface` rules of the config hold them. */
function interfaces(): Record<string, string[]> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const config = require(join(ROOT, '.dependency-cruiser.cjs')) as { forbidden: { name: string; to: { pathNot?: string[] } }[] };
  const out: Record<string, string[]> = {};
  for (const rule of config.forbidden) {
    const feature = /^(.+)-through-its-interface$/.exec(rule.name)?.[1];
    if (!feature) continue;
    out[feature] = (rule.to.pathNot ?? []).map((p) => p.replace(`^lambda/${feature}/`, '').replace(/\$$/, '').replace(/\\(.)/g, '$1'));
  }
  return out;
}

const NOT_FEATURES = ['api-docs', 'console', 'core', 'handlers'];

it('every folder of lambda/ is a feature of INTERFACES or core, handlers, api-docs, console', () => {
  const folders = readdirSync(join(ROOT, 'lambda'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
  expect(Object.keys(interfaces()).length).toBeGreaterThan(10);
  expect(folders.sort()).toEqual([...Object.keys(interfaces()), ...NOT_FEATURES].sort());
});

/**
 * The computed imports dependency-cruiser cannot follow, each with where its edge is seen instead.
 * load-validators.ts: esbuild must not inline Ajv (its specifier comes from MSG_CATALOG_VALIDATORS);
 * its `typeof import('./validators')` is the edge dependency-cruiser checks.
 */
const COMPUTED_IMPORTS = ['lambda/catalog/load-validators.ts'];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sources(join(dir, d.name)) : /\.tsx?$/.test(d.name) ? [join(dir, d.name)] : [],
  );
}

it('no import under lambda/ takes a template or a computed path (dependency-cruiser cannot see it)', () => {
  const found: string[] = [];
  for (const file of sources(join(ROOT, 'lambda'))) {
    const rel = relative(ROOT, file);
    readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
      // import( or require( whose argument is not a plain string literal.
      if (/\b(import|require)\(\s*(?!['"][^'"`$]*['"]\s*\))/.test(line) && !COMPUTED_IMPORTS.includes(rel)) found.push(`${rel}:${i + 1}: ${line.trim()}`);
    });
  }
  expect(found).toEqual([]);
});

it("docs/architecture.md's feature table gives each feature's interface as INTERFACES lists it", () => {
  const page = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const table: Record<string, string[]> = {};
  for (const line of page.split('\n')) {
    const cells = line.split(' | ');
    const feature = /^`lambda\/([^/]+)\/`$/.exec(cells[1] ?? '')?.[1];
    if (!line.startsWith('| ') || !feature || feature === 'core') continue;
    // The interface column: its file names in backquotes, leaving out what parentheses say of them.
    let cell = cells[cells.length - 1];
    while (/\([^()]*\)/.test(cell)) cell = cell.replace(/\([^()]*\)/g, '');
    table[feature] = [...cell.matchAll(/`([^`]+\.ts)`/g)].map((m) => m[1]).sort();
  }
  const config = Object.fromEntries(Object.entries(interfaces()).map(([f, files]) => [f, [...files].sort()]));
  expect(table).toEqual(config);
});
