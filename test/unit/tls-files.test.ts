/**
 * TLS material given as file paths (local runtime only) is read safely: under
 * the allowed directory (symbolic links resolved), regular files only (a FIFO froze the runtime,
 * /dev/zero would exhaust its memory), at most 64 KiB, PEM, opened once and kept until the file
 * changes. And the runtime's own endpoints are recognised on every address of this machine.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resetConfig } from '../../lambda/core/config';
import { MAX_TLS_FILE_BYTES, readTlsFile, tlsMaterial, tlsProblem } from '../../lambda/webhooks/storage/http-delivery';
import { isOwnEndpoint } from '../../lambda/webhooks/rules/ssrf';

const PEM_TEXT = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const root = mkdtempSync(join(tmpdir(), 'tls-files-'));
/** MSG_WEBHOOK_TLS_DIR; each namespace reads only its own folder in it. */
const tlsRoot = join(root, 'tls');
const NS = 'acme';
const dir = join(tlsRoot, NS);

beforeAll(() => {
  mkdirSync(dir, { recursive: true });
  mkdirSync(join(tlsRoot, 'other'));
  writeFileSync(join(tlsRoot, 'other', 'client.key'), PEM_TEXT);
  writeFileSync(join(tlsRoot, 'shared.pem'), PEM_TEXT);
  writeFileSync(join(dir, 'ca.pem'), PEM_TEXT);
  writeFileSync(join(root, 'outside.pem'), PEM_TEXT);
  writeFileSync(join(dir, 'big.pem'), PEM_TEXT + 'x'.repeat(MAX_TLS_FILE_BYTES));
  writeFileSync(join(dir, 'text.txt'), 'not a certificate');
  symlinkSync(join(root, 'outside.pem'), join(dir, 'escape.pem'));
  symlinkSync('/dev/zero', join(dir, 'zero.pem'));
  execFileSync('mkfifo', [join(dir, 'fifo.pem')]);
  mkdirSync(join(dir, 'sub.pem'));
  process.env.MSG_WEBHOOK_TLS_FILE_PATHS = 'true';
  process.env.MSG_WEBHOOK_TLS_DIR = tlsRoot;
  resetConfig();
});
afterAll(() => {
  delete process.env.MSG_WEBHOOK_TLS_FILE_PATHS;
  delete process.env.MSG_WEBHOOK_TLS_DIR;
  resetConfig();
  rmSync(root, { recursive: true, force: true });
});

describe('TLS files', () => {
  it('reads a PEM file under the directory, by absolute or relative path', () => {
    expect(readTlsFile(join(dir, 'ca.pem'), NS)).toBe(PEM_TEXT);
    expect(readTlsFile('ca.pem', NS)).toBe(PEM_TEXT);
    expect(tlsProblem({ ca_cert: 'ca.pem' }, NS)).toBeUndefined();
  });

  it.each([
    ['a FIFO (it would block the process)', 'fifo.pem', /not a regular file/],
    ['/dev/zero behind a link', 'zero.pem', /outside/],
    ['/dev/zero itself', '/dev/zero', /outside/],
    ['a directory', 'sub.pem', /not a regular file/],
    ['a file over 64 KiB', 'big.pem', /at most 65536 bytes/],
    ['a file that is not PEM', 'text.txt', /not PEM/],
    ['a file outside the directory', join(root, 'outside.pem'), /outside/],
    ['a link out of the directory', 'escape.pem', /outside/],
    ['a path climbing out', '../outside.pem', /outside/],
    ['/etc/passwd', '/etc/passwd', /outside/],
    ["another namespace's file", '../other/client.key', /outside/],
    ["another namespace's file by absolute path", join(tlsRoot, 'other', 'client.key'), /outside/],
    ['a file beside the namespaces', '../shared.pem', /outside/],
    ['a missing file', 'missing.pem', /cannot be read/],
  ])('refuses %s with a 422 message', (_what, path, message) => {
    const started = Date.now();
    const problem = tlsProblem({ client_key: path }, NS);
    expect(problem).toEqual({ field: 'tls.client_key', message: expect.stringMatching(message) });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('reads a file once and again only when it changes', () => {
    const file = join(dir, 'changing.pem');
    writeFileSync(file, PEM_TEXT);
    expect(readTlsFile(file, NS)).toBe(PEM_TEXT);
    const next = PEM_TEXT.replace('MIIB', 'MIIC');
    writeFileSync(file, next);
    expect(readTlsFile(file, NS)).toBe(next);
  });

  it("reads a namespace's files only from its own folder, and refuses a namespace that names another place", () => {
    expect(readTlsFile('client.key', 'other')).toBe(PEM_TEXT);
    expect(tlsProblem({ client_key: 'client.key' }, NS)?.message).toMatch(/cannot be read/);
    for (const ns of ['..', '.', 'a/b', '']) expect(tlsProblem({ ca_cert: 'ca.pem' }, ns)).toEqual({ field: 'tls.ca_cert', message: expect.any(String) });
    expect(tlsProblem({ ca_cert: 'ca.pem' }, 'nofolder')?.message).toMatch(/does not exist/);
  });

  it('accepts no path without a directory, and none at all where paths are off (AWS)', () => {
    delete process.env.MSG_WEBHOOK_TLS_DIR;
    resetConfig();
    expect(tlsProblem({ ca_cert: join(dir, 'ca.pem') }, NS)?.message).toMatch(/MSG_WEBHOOK_TLS_DIR/);
    process.env.MSG_WEBHOOK_TLS_FILE_PATHS = 'false';
    process.env.MSG_WEBHOOK_TLS_DIR = tlsRoot;
    resetConfig();
    expect(tlsProblem({ ca_cert: 'ca.pem' }, NS)?.message).toMatch(/must be PEM text/);
    expect(tlsMaterial(PEM_TEXT, NS)).toBe(PEM_TEXT);
    process.env.MSG_WEBHOOK_TLS_FILE_PATHS = 'true';
    resetConfig();
  });
});

describe('isOwnEndpoint', () => {
  const own = [{ host: '127.0.0.1', port: 8000 }, { host: 'localhost', port: 9324 }, { host: '10.1.2.3', port: 4566 }];
  const local = new Set(['192.0.2.2']);
  it.each([
    ['127.0.0.1', 8000, true], ['127.0.0.2', 8000, true], ['::1', 8000, true], ['0.0.0.0', 8000, true], ['::', 8000, true],
    ['::ffff:127.0.0.1', 8000, true], ['192.0.2.2', 8000, true], ['127.0.0.1', 9324, true], ['10.1.2.3', 4566, true],
    ['127.0.0.1', 8001, false], ['10.1.2.3', 8000, false], ['10.1.2.4', 4566, false], ['93.184.216.34', 8000, false], ['127.0.0.1', 4566, false],
  ] as const)('%s port %d → %s', (address, port, expected) => {
    expect(isOwnEndpoint(address, port, own, local)).toBe(expected);
  });
});
