import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { checkPrerequisites, findChromium, javaMajor, missingMessage } from '../../bin/test-prerequisites';

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

test("macOS's java stub (no JDK installed or linked) is told apart, with how to link Homebrew's keg-only openjdk@17", () => {
  // What /usr/bin/java prints on a Mac without a Java runtime, on stderr with exit status 1.
  const stub = `echo "The operation couldn't be completed. Unable to locate a Java Runtime." >&2; echo 'Please visit http://www.java.com for information on installing Java.' >&2; exit 1`;
  const path = fakePath({ java: stub, curl: 'exit 0', jq: 'exit 0', chromium: 'exit 0', openssl: 'exit 0' });
  const message = missingMessage(checkPrerequisites({ PATH: path, CHROMIUM_PATH: join(path, 'chromium') }))!;
  expect(message).toContain("java on PATH is macOS's stub");
  expect(message).not.toContain('printed no version');
  expect(message).toContain('brew install openjdk@17, then (keg-only) sudo ln -sfn "$(brew --prefix)/opt/openjdk@17/libexec/openjdk.jdk" /Library/Java/JavaVirtualMachines/openjdk-17.jdk');
  expect(message).toContain('export PATH="$(brew --prefix)/opt/openjdk@17/bin:$PATH"');
});

test('without CHROMIUM_PATH the first browser present among the candidates is used, and none present names them all with what works where', () => {
  const path = fakePath({ java: `echo 'openjdk version "17.0.15" 2025-04-15' >&2`, curl: 'exit 0', jq: 'exit 0', openssl: 'exit 0', 'google-chrome': 'exit 0' });
  const candidates = [join(path, 'chromium'), join(path, 'snap-chromium'), join(path, 'google-chrome')];
  expect(findChromium({ PATH: path }, candidates)).toBe(join(path, 'google-chrome'));
  expect(findChromium({ PATH: path, CHROMIUM_PATH: '/elsewhere/chrome' }, candidates)).toBe('/elsewhere/chrome');
  expect(missingMessage(checkPrerequisites({ PATH: path }, candidates))).toBeUndefined();

  const message = missingMessage(checkPrerequisites({ PATH: path }, candidates.slice(0, 2)))!;
  expect(message).toContain(`none of ${join(path, 'chromium')}, ${join(path, 'snap-chromium')} is there and CHROMIUM_PATH is unset`);
  expect(message).toContain("Ubuntu (its chromium is a snap): Google Chrome's .deb");
  expect(message).toContain('sudo snap install chromium');
  expect(message).toContain('macOS: brew install --cask google-chrome');
  expect(message).not.toContain('brew install --cask chromium');
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
