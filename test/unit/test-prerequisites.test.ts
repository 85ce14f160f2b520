import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { checkPrerequisites, javaMajor, missingMessage } from '../../bin/test-prerequisites';

/** A PATH of its own holding fake commands (each a shell script), so the check sees what we choose. */
function fakePath(commands: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'prereq-'));
  for (const [name, script] of Object.entries(commands)) {
    const file = join(dir, name);
    writeFileSync(file, `#!/bin/sh\n${script}\n`);
    chmodSync(file, 0o755);
  }
  return dir;
}

test('java -version is read as OpenJDK and the old 1.x scheme print it', () => {
  expect(javaMajor('openjdk version "17.0.15" 2025-04-15')).toBe(17);
  expect(javaMajor('java version "1.8.0_382"')).toBe(8);
  expect(javaMajor('openjdk version "21" 2023-09-19')).toBe(21);
  expect(javaMajor('no java here')).toBeUndefined();
});

test('a machine without chromium, jq and a recent java gets one message naming each with how to install it', () => {
  const path = fakePath({ java: `echo 'openjdk version "11.0.2" 2019-01-15' >&2`, curl: 'exit 0', openssl: 'exit 0' });
  const checked = checkPrerequisites({ PATH: path, CHROMIUM_PATH: join(path, 'no-chromium') });
  const message = missingMessage(checked)!;
  expect(message).toContain('3 prerequisites are missing');
  expect(message).toContain('java 11 is on PATH');
  expect(message).toContain('apt-get install -y openjdk-17-jre-headless');
  expect(message).toContain(`no executable at ${join(path, 'no-chromium')} (CHROMIUM_PATH)`);
  expect(message).toContain('apt-get install -y chromium');
  expect(message).toContain('jq is not on PATH');
  expect(message).not.toContain('curl is not on PATH');
});

test('a machine without openssl, which the webhook TLS tests make their certificates with, is told so', () => {
  const path = fakePath({ java: `echo 'openjdk version "17.0.15" 2025-04-15' >&2`, curl: 'exit 0', jq: 'exit 0', chromium: 'exit 0' });
  const message = missingMessage(checkPrerequisites({ PATH: path, CHROMIUM_PATH: join(path, 'chromium') }));
  expect(message).toContain('a prerequisite is missing');
  expect(message).toContain('openssl is not on PATH');
  expect(message).toContain('apt-get install -y openssl');
});

test('nothing is said when everything is there', () => {
  const path = fakePath({ java: `echo 'openjdk version "17.0.15" 2025-04-15' >&2`, curl: 'exit 0', jq: 'exit 0', chromium: 'exit 0', openssl: 'exit 0' });
  expect(missingMessage(checkPrerequisites({ PATH: path, CHROMIUM_PATH: join(path, 'chromium') }))).toBeUndefined();
});

test('npm test stops before any jest run with that message', () => {
  const path = fakePath({ curl: 'exit 0', jq: 'exit 0' });
  const tsx = require.resolve('tsx/cli');
  const out = spawnSync(process.execPath, [tsx, 'bin/test.ts'], { encoding: 'utf8', env: { ...process.env, PATH: path, CHROMIUM_PATH: join(path, 'none') }, timeout: 60_000 });
  expect(out.status).toBe(1);
  expect(out.stderr).toContain('java is not on PATH');
  expect(out.stdout).not.toContain('==> npm test');
});
