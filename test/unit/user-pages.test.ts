/**
 * The user pages (README.md and docs/*.md; development.md "Writing docs") start from the task and
 * state guarantees, limits and costs once, leaving the why to the design records: each stays
 * within 300 lines. The API reference that `npm run docs:api` writes into docs/api.md (between its
 * markers) is generated, not read top to bottom, and does not count.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '../..');
const MAX_LINES = 300;
const GENERATED = /<!-- api-reference:start -->[\s\S]*?<!-- api-reference:end -->/g;
const pages = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];

describe('user pages', () => {
  it.each(pages)(`%s is at most ${MAX_LINES} lines (the why goes to docs/design/)`, (page) => {
    const text = readFileSync(join(ROOT, page), 'utf8').replace(GENERATED, '');
    expect(text.trimEnd().split('\n').length).toBeLessThanOrEqual(MAX_LINES);
  });
});
