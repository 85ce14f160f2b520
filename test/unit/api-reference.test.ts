/**
 * docs/api.md is the API reference the docs point to: its operations block must be what
 * `npm run docs:api` renders from the OpenAPI document the API serves, and the page may name
 * nothing outside the repository (the contract lives here, not in files a user cannot open).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildOpenApi } from '../../lambda/api-docs/openapi';
import { renderApiReference, withReference } from '../../bin/api-reference';

const ROOT = join(__dirname, '../..');

describe('docs/api.md', () => {
  const page = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');

  it('holds the reference rendered from the served OpenAPI document (run npm run docs:api after changing a route or schema)', () => {
    expect(withReference(page)).toBe(page);
  });

  it('names every operation of the document', () => {
    const doc = buildOpenApi() as { paths: Record<string, Record<string, { operationId: string }>> };
    const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    const reference = renderApiReference();
    expect(ids.filter((id) => !reference.includes(`#### ${id}\n`))).toEqual([]);
  });

  it('refuses a page without the markers rather than dropping the reference', () => {
    expect(() => withReference('# API\n')).toThrow(/api-reference:start/);
  });
});

describe('user docs', () => {
  const pages = ['README.md', ...require('node:fs').readdirSync(join(ROOT, 'docs')).filter((f: string) => f.endsWith('.md')).map((f: string) => `docs/${f}`)];

  it.each(pages)('%s cites no file outside the repository and no internal note', (page) => {
    const text = readFileSync(join(ROOT, page), 'utf8');
    const found = [/\bSPEC\.md\b/, /\bDESIGN\.md\b/, /\bSTYLE\.md\b/, /\bissue \d+/i, /issue note/i, /not yet checked/i].filter((re) => re.test(text)).map(String);
    expect(found).toEqual([]);
  });
});
