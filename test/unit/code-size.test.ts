/**
 * No source file goes over 400 lines (docs/development.md "Project layout"): neither what is
 * deployed or run (lambda/, lib/, local/, bin/, client/, console/src/) nor the tests, the
 * benchmarks and the examples (test/, bench/, examples/). A file that grows past it is split by
 * what it does; a test file keeps its tests and moves its helpers into a module beside it (one
 * jest file starts its engines once). client/api.ts is generated from the OpenAPI document and
 * does not count.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '../..');
const MAX_LINES = 400;
const DIRS = ['lambda', 'lib', 'local', 'bin', 'client', 'console/src', 'test', 'bench', 'examples'];
const GENERATED = new Set(['client/api.ts']);
function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (statSync(join(ROOT, path)).isDirectory()) return sources(path);
    return /\.(ts|tsx|mjs|cjs)$/.test(name) && !GENERATED.has(path) ? [path] : [];
  });
}

it(`every source file of ${DIRS.join(', ')} is at most ${MAX_LINES} lines`, () => {
  const files = DIRS.flatMap(sources);
  expect(files.length).toBeGreaterThan(500);
  for (const dir of ['test', 'bench', 'examples']) expect(files.some((f) => f.startsWith(`${dir}/`))).toBe(true);
  const over = files
    .map((file) => ({ file, lines: readFileSync(join(ROOT, file), 'utf8').trimEnd().split('\n').length }))
    .filter((f) => f.lines > MAX_LINES);
  expect(over).toEqual([]);
});
