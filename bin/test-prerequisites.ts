/**
 * What `npm test` needs outside npm, checked before any jest run starts (bin/test.ts) and by CI
 * (.ci/run), so that a machine without one of them gets one message saying what is missing and
 * how to install it, rather than a page of failing tests. This is the one list: README
 * "Prerequisites", bin/test.ts and .ci/run name it.
 *
 * - Java 17 or later: DynamoDB Local (every project but unit and infra).
 * - Chromium (or Google Chrome): the browser project (playwright-core drives an installed browser;
 *   it downloads none). CHROMIUM_PATH names one; otherwise the first of CHROMIUM_CANDIDATES.
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

/**
 * Where a browser is looked for when CHROMIUM_PATH is unset, in this order:
 * - Debian's `chromium` package (https://packages.debian.org/stable/chromium);
 * - Ubuntu's snap: Ubuntu ships Chromium as a snap since 19.10, its deb only installs the snap
 *   (https://snapcraft.io/blog/chromium-in-ubuntu-deb-to-snap-transition);
 * - Google Chrome's .deb (https://www.google.com/chrome/) and its macOS app (`brew install --cask
 *   google-chrome`). Homebrew's `chromium` cask is disabled since 2026-09-01 because it fails the
 *   macOS Gatekeeper check (https://github.com/Homebrew/homebrew-cask/blob/HEAD/Casks/c/chromium.rb).
 */
const CHROMIUM_CANDIDATES = ['/usr/bin/chromium', '/snap/bin/chromium', '/usr/bin/google-chrome', '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome'];

/** The browser the browser tests drive: CHROMIUM_PATH when set (even if wrong: the check says so), else the first candidate present. */
export function findChromium(env: NodeJS.ProcessEnv = process.env, candidates = CHROMIUM_CANDIDATES): string | undefined {
  if (env.CHROMIUM_PATH) return env.CHROMIUM_PATH;
  return candidates.find(executable);
}

/**
 * A snap's browser sees neither the host's /tmp (a snap has a private one) nor hidden folders of
 * $HOME, only its own ~/snap/<name>/ (https://snapcraft.io/docs/home-interface); so its profile
 * goes there (the same fix as https://github.com/cypress-io/cypress/pull/7039).
 */
export const isSnap = (browser: string): boolean => browser.startsWith('/snap/');

/**
 * What macOS answers for `java -version` when no JDK is installed or linked: /usr/bin/java is a
 * stub that prints this and exits 1.
 */
const APPLE_JAVA_STUB = 'Unable to locate a Java Runtime';

export function checkPrerequisites(env: NodeJS.ProcessEnv = process.env, chromiumCandidates = CHROMIUM_CANDIDATES): Prerequisite[] {
  // Homebrew's openjdk@17 is keg-only: it is not linked into the PATH, and macOS's /usr/bin/java
  // finds it only through the symlink `brew info openjdk@17` prints
  // (https://formulae.brew.sh/formula/openjdk@17: "For the system Java wrappers to find this JDK, symlink it").
  const java: Prerequisite = {
    name: 'Java 17 or later',
    neededBy: 'DynamoDB Local (integration, model, faults, simulation, docs and browser tests)',
    install:
      'Debian/Ubuntu: sudo apt-get install -y openjdk-17-jre-headless; macOS: brew install openjdk@17, then (keg-only) sudo ln -sfn "$(brew --prefix)/opt/openjdk@17/libexec/openjdk.jdk" /Library/Java/JavaVirtualMachines/openjdk-17.jdk, or export PATH="$(brew --prefix)/opt/openjdk@17/bin:$PATH"',
  };
  if (!onPath('java', env.PATH)) java.problem = 'java is not on PATH';
  else {
    const out = spawnSync('java', ['-version'], { encoding: 'utf8', env });
    const printed = `${out.stderr ?? ''}${out.stdout ?? ''}`;
    const major = javaMajor(printed);
    if (printed.includes(APPLE_JAVA_STUB)) java.problem = `java on PATH is macOS's stub, which finds no Java runtime ("${APPLE_JAVA_STUB}")`;
    else if (major === undefined) java.problem = 'java -version printed no version';
    else if (major < 17) java.problem = `java ${major} is on PATH`;
  }
  const browser = findChromium(env, chromiumCandidates);
  const chromium: Prerequisite = {
    name: 'Chromium',
    neededBy: 'the console and portal browser tests (playwright-core drives an installed Chromium or Chrome)',
    install:
      "Debian: sudo apt-get install -y chromium; Ubuntu (its chromium is a snap): Google Chrome's .deb from https://www.google.com/chrome/ (/usr/bin/google-chrome), or sudo snap install chromium; macOS: brew install --cask google-chrome (Homebrew's chromium cask is disabled); or set CHROMIUM_PATH to any Chromium or Chrome binary",
  };
  if (!browser) chromium.problem = `none of ${chromiumCandidates.join(', ')} is there and CHROMIUM_PATH is unset`;
  else if (!executable(browser)) chromium.problem = `no executable at ${browser} (CHROMIUM_PATH)`;
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
