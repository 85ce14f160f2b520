/**
 * client/api.ts is generated from the OpenAPI document (bin/generate-client.ts); regenerating it
 * must give the committed file, so a route or schema change cannot leave the client behind.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

jest.setTimeout(60_000);

const ROOT = join(__dirname, '../..');

// One run of the check for both files (generating loads openapi-typescript and TypeScript: seconds
// of CPU each time): the committed client/api.ts, and a copy with one type changed.
let run: { status: number | null; stderr: string };
let stale: string;
beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'client-'));
  try {
    stale = join(dir, 'api.ts');
    writeFileSync(stale, readFileSync(join(ROOT, 'client/api.ts'), 'utf8').replace('receipt_handle: string;', 'receipt_handle: number;'));
    const r = spawnSync(join(ROOT, 'node_modules/.bin/tsx'), ['bin/generate-client.ts', '--check', join(ROOT, 'client/api.ts'), stale], { cwd: ROOT, encoding: 'utf8' });
    run = { status: r.status, stderr: r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

describe('typed client', () => {
  it('client/api.ts is what openapi-typescript generates from the current OpenAPI document', () => {
    expect(run.stderr).toContain(`${join(ROOT, 'client/api.ts')} is up to date`);
  });

  it('the check fails for types that differ from the document', () => {
    expect(run.stderr).toContain(`${stale} is out of date`);
    expect(run.status).toBe(1);
  });
});
