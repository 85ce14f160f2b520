/**
 * One source for every figure (bench/figures.ts): every `<!-- figures:NAME:start -->` block of
 * README.md, docs/*.md and the design records (docs/design/*.md) must be exactly what docs/figures.json renders (a hand edit, or a
 * results file changed without `npm run figures`, fails here), every section must still have the
 * table format of the command that writes it (a bench that gained a column and was not run again
 * fails here), and a page may not show a measured table outside a block. A figure quoted in prose
 * or a summary table carries a comment naming its section, row and column
 * (`2.26<!-- fig bench-queues :: lifecycle ; 10 :: USD per million msgs -->`), and must agree too.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { blocksOf, docPages, headerRows, readFigures, renderPage, renderSection } from '../../bench/figures';

const ROOT = join(__dirname, '../..');
const figures = readFigures(ROOT);
const pages = docPages(ROOT).map((page) => ({ page, text: readFileSync(join(ROOT, page), 'utf8') }));

describe('docs figures', () => {
  it.each(pages.map((p) => [p.page, p]))('%s: every figures block agrees with docs/figures.json', (_page, { page, text }) => {
    const rendered = renderPage(text, figures, page);
    if (rendered !== text) {
      const stale = blocksOf(text).filter((n) => !text.includes(renderSection(n, figures.sections[n])));
      throw new Error(`${page}: ${stale.length ? `figures block(s) ${stale.join(', ')}` : 'quoted figures (<!-- fig ... -->)'} differ from docs/figures.json; run \`npm run figures\` (never edit a block by hand)`);
    }
  });

  it('every section of docs/figures.json is shown somewhere', () => {
    const shown = new Set(pages.flatMap((p) => blocksOf(p.text)));
    expect(Object.keys(figures.sections).filter((n) => !shown.has(n))).toEqual([]);
  });

  it('every section `npm run bench -- --figures` writes is stored and shown, so no page types it by hand', () => {
    // The SOURCES table of bench/run.ts names each section the bench writes (read, not imported: importing runs the bench).
    const run = readFileSync(join(ROOT, 'bench/run.ts'), 'utf8');
    const table = run.slice(run.indexOf('const SOURCES'), run.indexOf('};', run.indexOf('const SOURCES')));
    const written = [...table.matchAll(/'(bench-[a-z0-9-]+)':/g)].map((m) => m[1]);
    expect(written.length).toBeGreaterThan(5);
    const shown = new Set(pages.flatMap((p) => blocksOf(p.text)));
    expect(written.filter((n) => !figures.sections[n] || !shown.has(n))).toEqual([]);
  });

  it.each(Object.entries(figures.sections))('section %s has the current format of its source', (name, s) => {
    const rows = headerRows(readFileSync(join(ROOT, s.source), 'utf8'));
    expect(rows.length).toBeGreaterThan(0);
    const missing = rows.filter((row) => !s.markdown.includes(row));
    if (missing.length) throw new Error(`${name} was written by an older format of ${s.source} (missing ${missing.join(' ; ')}); measure again: ${s.command}`);
    expect(s.measured).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it.each(pages.map((p) => [p.page, p]))('%s shows no measured table outside a figures block', (_page, { text }) => {
    // A header row any writer prints, found outside the blocks, is a hand-copied figure table.
    const outside = text.replace(/<!-- figures:([a-z0-9-]+):start -->[\s\S]*?<!-- figures:\1:end -->/g, '');
    const headers = Object.values(figures.sections).flatMap((s) => headerRows(readFileSync(join(ROOT, s.source), 'utf8')));
    expect(headers.filter((h) => outside.includes(h))).toEqual([]);
  });

  it('every page under docs/ that shows a figures block is rendered and checked (design records too)', () => {
    const all = readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.md') && !f.startsWith('bench/'))
      .map((f) => `docs/${f}`);
    const withBlocks = all.filter((p) => blocksOf(readFileSync(join(ROOT, p), 'utf8')).length > 0);
    expect(withBlocks.filter((p) => !docPages(ROOT).includes(p))).toEqual([]);
  });

  it('renderPage refuses a block naming no section and an unclosed block', () => {
    expect(() => renderPage('<!-- figures:nope:start -->\nx\n<!-- figures:nope:end -->', figures)).toThrow(/names no section/);
    expect(() => renderPage('<!-- figures:bench-queues:start -->\nx\n', figures)).toThrow(/no matching/);
  });

  it('renderPage rewrites a figure quoted in prose from its section, and refuses one it cannot find', () => {
    const markdown = ['| op | batch | USD | busiest |', '|---|---:|---:|---|', '| a | 1 | 9.5 | 2 |', '| a | 10 | 2.5 | 0.6 (`k|1`) |'].join('\n');
    const f = { sections: { s: { command: 'c', measured: '2026-01-02', environment: 'e', source: 'x', markdown } } };
    const quote = (text: string) => renderPage(text, f);
    expect(quote('$1<!-- fig s :: a ; 10 :: USD --> on 2000-01-01<!-- fig s :: measured -->')).toBe('$2.5<!-- fig s :: a ; 10 :: USD --> on 2026-01-02<!-- fig s :: measured -->');
    expect(quote('| 0.1<!-- fig s :: a ; 10 :: busiest --> | about 7<!-- fig s :: a ; 10 :: busiest :: per-key --> a second |')).toBe(
      '| 0.6<!-- fig s :: a ; 10 :: busiest --> | about 1,700<!-- fig s :: a ; 10 :: busiest :: per-key --> a second |',
    );
    expect(quote('<!-- fig s :: a ; 1 :: busiest :: per-key -->')).toBe('500<!-- fig s :: a ; 1 :: busiest :: per-key -->');
    expect(quote('9<!-- fig s :: a ; 1 :: #3 -->')).toBe('9.5<!-- fig s :: a ; 1 :: #3 -->');
    expect(() => quote('1<!-- fig s :: b :: USD -->')).toThrow(/no row/);
    expect(() => quote('1<!-- fig s :: a ; 10 :: nope -->')).toThrow(/no column/);
    expect(() => quote('1<!-- fig t :: measured -->')).toThrow(/names no section/);
    expect(() => quote('1<!-- fig s :: a ; 10 :: USD :: doubled -->')).toThrow(/unknown/);
  });

  it('headerRows finds header literals and leaves separators and data rows out', () => {
    expect(headerRows("x = ['| a | b |', '|---|---:|', `| ${v} | 1 |`, '| `c` | d |', `| e | f |`];")).toEqual(['| a | b |', '| `c` | d |', '| e | f |']);
  });
});
