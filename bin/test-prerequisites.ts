/**
 * What `npm test` needs outside npm, checked before any jest run starts (bin/test.ts), so that a
 * machine without one of them gets one message saying what is missing and how to install it,
 * rather than a page of failing tests (README "Prerequisites").
 *
 * - Java 17 or later: DynamoDB Local (every project but unit and infra).
 * - chromium: the browser project (playwright-core drives an installed Chromium; it downloads none).
 * - curl and jq: the docs project runs the pages' shell examples.
 * - openssl: the webhook TLS tests make their throwaway certificates with it (test/fixtures/tls.ts).
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export interface Prerequisite {
  name: string;
  /** Which tests need it. */
  neededBy: string;
  /** Undefined when present, else what was found wrong. */
  problem?: string;
  install: string;
}

const executable = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

const onPath = (command: string, path = process.env.PATH ?? ''): boolean => path.split(delimiter).some((dir) => dir && executable(join(dir, command)));

/** The major version in `java -version`'s first line: `openjdk version "17.0.15"` → 17, `"1.8.0_382"` → 8. */
export function javaMajor(versionOutput: string): number | undefined {
  const m = /version "(\d+)(?:\.(\d+))?/.exec(versionOutput);
  if (!m) return undefined;
  const first = Number(m[1]);
  return first === 1 && m[2] ? Number(m[2]) : first;
}

export function checkPrerequisites(env: NodeJS.ProcessEnv = process.env): Prerequisite[] {
  const java: Prerequisite = {
    name: 'Java 17 or later',
    neededBy: 'DynamoDB Local (integration, model, faults, simulation, docs and browser tests)',
    install: 'Debian/Ubuntu: sudo apt-get install -y openjdk-17-jre-headless; macOS: brew install openjdk@17',
  };
  if (!onPath('java', env.PATH)) java.problem = 'java is not on PATH';
  else {
    const out = spawnSync('java', ['-version'], { encoding: 'utf8', env });
    const major = javaMajor(`${out.stderr ?? ''}${out.stdout ?? ''}`);
    if (major === undefined) java.problem = 'java -version printed no version';
    else if (major < 17) java.problem = `java ${major} is on PATH`;
  }
  const chromiumPath = env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  const chromium: Prerequisite = {
    name: 'Chromium',
    neededBy: 'the console and portal browser tests (playwright-core drives an installed Chromium)',
    install: 'Debian/Ubuntu: sudo apt-get install -y chromium; macOS: brew install --cask chromium, then export CHROMIUM_PATH=/Applications/Chromium.app/Contents/MacOS/Chromium; or set CHROMIUM_PATH to any Chromium or Chrome binary',
  };
  if (!executable(chromiumPath)) chromium.problem = `no executable at ${chromiumPath}${env.CHROMIUM_PATH ? ' (CHROMIUM_PATH)' : ''}`;
  const tools = ['curl', 'jq'].map<Prerequisite>((command) => ({
    name: command,
    neededBy: "the docs test (it runs the pages' shell examples)",
    install: `Debian/Ubuntu: sudo apt-get install -y ${command}; macOS: brew install ${command}`,
    ...(onPath(command, env.PATH) ? {} : { problem: `${command} is not on PATH` }),
  }));
  const openssl: Prerequisite = {
    name: 'openssl',
    neededBy: 'the webhook TLS tests (they make their certificates with it: test/fixtures/tls.ts)',
    install: 'Debian/Ubuntu: sudo apt-get install -y openssl; macOS: brew install openssl@3',
    ...(onPath('openssl', env.PATH) ? {} : { problem: 'openssl is not on PATH' }),
  };
  return [java, chromium, ...tools, openssl];
}

/** One message naming every missing prerequisite and how to get it; undefined when all are present. */
export function missingMessage(checked: Prerequisite[]): string | undefined {
  const missing = checked.filter((p) => p.problem);
  if (!missing.length) return undefined;
  return [
    `npm test: ${missing.length === 1 ? 'a prerequisite is' : `${missing.length} prerequisites are`} missing (README "Prerequisites"):`,
    ...missing.map((p) => `  - ${p.name}: ${p.problem}. Needed by ${p.neededBy}.\n    Install: ${p.install}`),
    'Then run npm test again (or run the files that need none of them: npm test -- test/unit).',
  ].join('\n');
}
