/**
 * Comments explain the code and cite docs (AWS's pages, docs/*.md, the records of docs/design/),
 * not the project's own history: no issue numbers, no review or trace names, no merge commits.
 * The reason a test exists is the promise it checks or the AWS behaviour it relies on, which
 * outlives the branch that found it. Every comment and every test title (the text of its string,
 * read with the comment: a title is where a test names itself) of the TypeScript under the folders
 * below is read.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(__dirname, '../..');
const FOLDERS = ['bench', 'bin', 'examples', 'lambda', 'lib', 'local', 'test'];

/** Internal history a comment must not carry. Built from parts so this file does not match itself. */
const HISTORY = [
  new RegExp(['attack', 'review'].join(' '), 'i'),
  new RegExp(['found by', 'review'].join(' '), 'i'),
  new RegExp('\\b' + 'review' + ' of ', 'i'),
  new RegExp('\\b' + 'review' + '\\d+\\b', 'i'),
  new RegExp('\\b' + 'trace' + '\\d+\\b', 'i'),
  new RegExp('\\b' + 'merge' + ' [0-9a-f]{7}', 'i'),
  new RegExp('\\b' + 'issue' + ' \\d+', 'i'),
];

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    if (d.name === 'node_modules' || d.name.startsWith('.')) return [];
    const p = join(dir, d.name);
    return d.isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** The comments of a source (block and line), and the first string of each it/describe/test call. */
function commentsOf(text: string): string[] {
  const comments = text.match(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g) ?? [];
  const titles = [...text.matchAll(/\b(?:it|describe|test)(?:\.each\([^)]*\))?\(\s*(['"`])((?:\\.|(?!\1)[^\\])*)\1/g)].map((m) => m[2]);
  return [...comments, ...titles];
}

const files = FOLDERS.flatMap((f) => tsFiles(join(ROOT, f)));

it('reads the sources', () => {
  expect(files.length).toBeGreaterThan(100);
  expect(commentsOf("// a\n/** b */\nit('c', () => {});\nit.each(x)('d', () => {});")).toEqual(['// a', '/** b */', 'c', 'd']);
});

it('no comment or test title carries internal history (reviews, traces, merges, issue numbers)', () => {
  const found = files.flatMap((f) =>
    commentsOf(readFileSync(f, 'utf8')).flatMap((c) => HISTORY.filter((re) => re.test(c)).map((re) => `${relative(ROOT, f)}: ${String(re)}: ${c.slice(0, 120)}`)),
  );
  expect(found).toEqual([]);
});
