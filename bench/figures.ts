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

export const FIGURES_FILE = 'docs/figures.json';
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
  return text.replace(MARKER, (_, name: string) => {
    const s = figures.sections[name];
    if (!s) throw new Error(`${page}: figures block "${name}" names no section of ${FIGURES_FILE} (known: ${Object.keys(figures.sections).join(', ')})`);
    return renderSection(name, s);
  });
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
