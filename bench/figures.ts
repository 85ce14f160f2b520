/**
 * One source for every figure in the docs: docs/figures.json holds each measured section (a bench
 * section, the SDK comparison, the bundle sizes, the fault-suite runs) as the command that wrote
 * it printed it, and the docs show a section only between its markers,
 *
 *   <!-- figures:bench-queues:start -->
 *   ... rendered from docs/figures.json, never edited by hand ...
 *   <!-- figures:bench-queues:end -->
 *
 * in README.md, any docs/*.md page or a design record (docs/design/*.md, where the measurements
 * behind a decision live). The writers (`npm run bench -- --figures`,
 * `npm run bench:sdk -- --figures`, the bundle test with MSG_WRITE_FIGURES=1) call writeSection,
 * which stores the section and re-renders every marked block; `npm run figures` re-renders them
 * from the file alone, and test/unit/docs-figures.test.ts fails when a block disagrees with the
 * file or a section is older than the format of the command that writes it.
 *
 * Plain fs only: no AWS or engine imports, so the unit test can load it.
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface FigureSection {
  /** The command that wrote the section (and writes it again). */
  command: string;
  /** YYYY-MM-DD of the run. */
  measured: string;
  /** The machine and engines it ran on, in words. */
  environment: string;
  /** The source file whose output format the section follows (its table headers). */
  source: string;
  /** The section as Markdown, exactly as its command printed it. */
  markdown: string;
}

export interface Figures {
  sections: Record<string, FigureSection>;
}

const FIGURES_FILE = 'docs/figures.json';
const MARKER = /<!-- figures:([a-z0-9-]+):start -->\n[\s\S]*?<!-- figures:\1:end -->/g;
const ANY_MARKER = /<!-- figures:([a-z0-9-]+):(start|end) -->/g;

export function readFigures(root = process.cwd()): Figures {
  return JSON.parse(readFileSync(join(root, FIGURES_FILE), 'utf8')) as Figures;
}

/** README.md, every docs/*.md page and every design record (docs/design/*.md), relative to the repository root. */
export function docPages(root = process.cwd()): string[] {
  const md = (dir: string) => (existsSync(join(root, dir)) ? readdirSync(join(root, dir)).filter((f) => f.endsWith('.md')).sort().map((f) => `${dir}/${f}`) : []);
  return ['README.md', ...md('docs'), ...md('docs/design')];
}

/** The text between a section's markers: a line naming its source run, then its Markdown. */
export function renderSection(name: string, s: FigureSection): string {
  return [
    `<!-- figures:${name}:start -->`,
    `<!-- written by \`npm run figures\` from docs/figures.json; do not edit by hand -->`,
    `*Measured with \`${s.command}\` on ${s.measured} (${s.environment}).*`,
    '',
    s.markdown.trim(),
    `<!-- figures:${name}:end -->`,
  ].join('\n');
}

/** The page with every marked block rendered from the figures; throws on a block naming no section. */
export function renderPage(text: string, figures: Figures, page = 'page'): string {
  const opened = [...text.matchAll(ANY_MARKER)].filter((m) => m[2] === 'start').map((m) => m[1]);
  const closed = [...text.matchAll(MARKER)].map((m) => m[1]);
  const unclosed = opened.filter((n) => !closed.includes(n));
  if (unclosed.length) throw new Error(`${page}: figures block ${unclosed.join(', ')} has no matching <!-- figures:NAME:end --> line; close it`);
  const section = (name: string, what: string) => {
    const s = figures.sections[name];
    if (!s) throw new Error(`${page}: ${what} "${name}" names no section of ${FIGURES_FILE} (known: ${Object.keys(figures.sections).join(', ')})`);
    return s;
  };
  return text
    .replace(MARKER, (_, name: string) => renderSection(name, section(name, 'figures block')))
    .replace(QUOTE, (_, _value: string | undefined, name: string, path: string) => `${quotedValue(section(name, 'figure quote'), path, page)}<!-- fig ${name} :: ${path} -->`);
}

/**
 * A figure quoted in prose or in a summary table: the value, then a comment saying where it comes
 * from, which `npm run figures` follows to write the value again:
 *
 *   $2.26<!-- fig bench-queues :: lifecycle ; 10 :: USD per million msgs -->   a table cell: the
 *       section, the first cells of its row (`;` between them), the header of its column (or
 *       `#N`, its number, where the header is empty)
 *   2026-11-23<!-- fig bench-queues :: measured -->                           the run's date
 *   5,000<!-- fig bench-queues :: lifecycle ; 10 :: busiest key WRU/msg :: per-key -->
 *       1,000 ÷ the cell (2 significant digits): the messages a second one partition key carries
 *       when each takes that many write units, at DynamoDB's 1,000 write units a second per key
 *
 * `::` and `;` rather than `|`, so that a quote fits in a Markdown table cell.
 */
const QUOTE = /([0-9][0-9.,-]*)?<!-- fig ([a-z0-9-]+) :: (.*?) -->/g;

function quotedValue(s: FigureSection, path: string, page: string): string {
  const [row, column, transform, ...rest] = path.split(' :: ');
  if (row === 'measured' && column === undefined) return s.measured;
  if (column === undefined || rest.length || (transform !== undefined && transform !== 'per-key')) {
    throw new Error(`${page}: figure quote "${path}" is of an unknown form (row :: column [:: per-key], or measured)`);
  }
  const cell = tableCell(s.markdown, row.split(' ; '), column, page);
  const value = cell.match(/^[0-9][0-9.,]*/)?.[0];
  if (!value) throw new Error(`${page}: figure quote "${path}" finds "${cell}", not a number`);
  if (transform === undefined) return value;
  return Number((1000 / Number(value.replace(/,/g, ''))).toPrecision(2)).toLocaleString('en-US');
}

/** The cells of a Markdown table row; a `|` inside backticks belongs to its cell. */
function cells(line: string): string[] {
  const out = [''];
  let code = false;
  for (const ch of line.trim().slice(1, -1)) {
    if (ch === '`') code = !code;
    if (ch === '|' && !code) out.push('');
    else out[out.length - 1] += ch;
  }
  return out.map((c) => c.trim());
}

/** The cell of the first table row whose first cells are `row`, in the column headed `column` (`#2`: the second column, for a header left empty). */
function tableCell(markdown: string, row: string[], column: string, page = 'page'): string {
  let header: string[] | undefined;
  let rowFound = false;
  for (const line of markdown.split('\n')) {
    if (!line.startsWith('|')) {
      header = undefined;
      continue;
    }
    const c = cells(line);
    if (!header) header = c;
    else if (!c.every((x) => /^:?-+:?$/.test(x)) && row.every((x, i) => c[i] === x)) {
      rowFound = true;
      const at = /^#\d+$/.test(column) ? Number(column.slice(1)) - 1 : header.indexOf(column);
      if (at >= 0) return c[at];
    }
  }
  throw new Error(`${page}: figure quote finds ${rowFound ? `no column "${column}" beside` : 'no row'} "${row.join(' ; ')}"`);
}

/** The names of the figure blocks a page shows. */
export function blocksOf(text: string): string[] {
  return [...text.matchAll(MARKER)].map((m) => m[1]);
}

/** Re-renders every page from the figures file; returns the pages it changed. */
export function renderAll(root = process.cwd()): string[] {
  const figures = readFigures(root);
  const changed: string[] = [];
  for (const page of docPages(root)) {
    const file = join(root, page);
    const text = readFileSync(file, 'utf8');
    const out = renderPage(text, figures, page);
    if (out !== text) {
      writeFileSync(file, out);
      changed.push(page);
    }
  }
  return changed;
}

/** Stores one section (replacing the previous run's) and re-renders the pages. */
export function writeSection(name: string, section: FigureSection, root = process.cwd()): string[] {
  const figures = readFigures(root);
  figures.sections[name] = section;
  const sorted: Figures = { sections: Object.fromEntries(Object.entries(figures.sections).sort(([a], [b]) => a.localeCompare(b))) };
  writeFileSync(join(root, FIGURES_FILE), `${JSON.stringify(sorted, null, 2)}\n`);
  return renderAll(root);
}

/**
 * The table header rows a source file prints (string literals of the form '| a | b |', separator
 * rows left out): a section whose Markdown lacks one of them was written by an older format of
 * its command and must be measured again.
 */
export function headerRows(sourceText: string): string[] {
  // '| a | `b` |' (backticks allowed inside single quotes) or `| a | b |` (a template without ${}).
  return [...sourceText.matchAll(/'(\| [^'\n]*\|)'|`(\| [^`\n$]*\|)`/g)].map((m) => m[1] ?? m[2]).filter((row) => !/^\|[-:| ]+\|$/.test(row));
}

export const today = () => new Date().toISOString().slice(0, 10);
