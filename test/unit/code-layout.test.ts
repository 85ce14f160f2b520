/**
 * The code's shape, checked by the tools made for it, as part of `npm test`:
 * - dependency-cruiser (`.dependency-cruiser.cjs`, `npm run lint:deps`): imports point down only,
 *   no cycles, the pure rules (core/rules/, a feature's rules) import no AWS, core imports no
 *   feature, a feature is imported only through its interface (by bench/ too), lambda/ never imports
 *   local/ or test/, the examples import only the typed client and packages;
 * - knip (`knip.json`, `npm run lint:unused`): no unused files, exports or dependencies.
 * Each prints what it found, which is what the failure shows.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

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
