/**
 * `npm run figures`: renders every `<!-- figures:NAME:start -->` block of README.md,
 * docs/*.md and docs/design/*.md from docs/figures.json (bench/figures.ts). `--check` changes nothing and exits 1 when
 * a block disagrees with the file (what test/unit/docs-figures.test.ts asserts in `npm test`).
 */
import { readFileSync } from 'node:fs';
import { docPages, readFigures, renderAll, renderPage } from '../bench/figures';

if (process.argv.includes('--check')) {
  const figures = readFigures();
  const stale = docPages().filter((p) => renderPage(readFileSync(p, 'utf8'), figures, p) !== readFileSync(p, 'utf8'));
  if (stale.length) {
    process.stderr.write(`figures: ${stale.join(', ')} disagree with docs/figures.json; run npm run figures\n`);
    process.exit(1);
  }
  process.stderr.write('figures: every block agrees with docs/figures.json\n');
} else {
  const changed = renderAll();
  process.stderr.write(`figures: ${changed.length ? `re-rendered ${changed.join(', ')}` : 'every block already agrees with docs/figures.json'}\n`);
}
