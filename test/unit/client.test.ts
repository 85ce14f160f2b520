/**
 * client/api.ts is generated from the OpenAPI document (bin/generate-client.ts); regenerating it
 * must give the committed file, so a route or schema change cannot leave the client behind.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

jest.setTimeout(60_000);

const ROOT = join(__dirname, '../..');
const check = (file?: string) =>
  execFileSync(join(ROOT, 'node_modules/.bin/tsx'), ['bin/generate-client.ts', '--check', ...(file ? [file] : [])], { cwd: ROOT, encoding: 'utf8', stdio: 'pipe' });

describe('typed client', () => {
  it('client/api.ts is what openapi-typescript generates from the current OpenAPI document', () => {
    expect(() => check()).not.toThrow();
  });

  it('the check fails for types that differ from the document', () => {
    const dir = mkdtempSync(join(tmpdir(), 'client-'));
    try {
      const stale = join(dir, 'api.ts');
      writeFileSync(stale, readFileSync(join(ROOT, 'client/api.ts'), 'utf8').replace('receipt_handle: string;', 'receipt_handle: number;'));
      expect(() => check(stale)).toThrow(/out of date/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
