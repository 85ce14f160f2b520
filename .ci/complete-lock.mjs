#!/usr/bin/env node
// Adds to package-lock.json the entries of platform-specific optional packages (for example
// @swc/core-darwin-arm64) that npm left out when it wrote the lock, and gives every such entry
// the `integrity` the registry publishes for it, so that `npm ci` on a Mac verifies those
// tarballs as it does every other one. Without the entries `npm ci` refuses the lock as out of
// sync with package.json ("Missing: ... from lock file"):
//   - https://github.com/npm/cli/issues/4828: `npm install` with node_modules present writes a
//     lock without the optional packages of other platforms (@swc/core's among them);
//   - https://github.com/npm/cli/issues/9846: `npm ci` rejects, as out of sync, a lock that
//     `npm install` just wrote without an optional dependency it could not fetch.
// On Linux, `npm ci` skips these packages for their os/cpu and never downloads them; on a Mac it
// downloads the darwin ones and checks them against `integrity` (https://docs.npmjs.com/cli/configuring-npm/package-lock-json:
// "integrity: A sha512 or sha1 Standard Subresource Integrity string for the artifact").
// The integrity comes from `npm view <name>@<version> dist.integrity` (the registry's own
// dist.integrity); an entry the registry cannot answer for keeps none and is reported.
//
//   node .ci/complete-lock.mjs           add what is missing (idempotent), print what was added
//   node .ci/complete-lock.mjs --check   exit 1 when entries or their integrity are missing, change nothing
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const OS = ['darwin', 'linux', 'win32', 'android', 'freebsd', 'openharmony', 'netbsd', 'openbsd', 'sunos', 'aix'];
const CPU = ['arm64', 'x64', 'arm', 'ia32', 'ppc64', 's390x', 'loong64', 'riscv64', 'mips64el', 'wasm32'];
const LIBC = { gnu: 'glibc', gnueabihf: 'glibc', musl: 'musl', musleabihf: 'musl' };

/** os, cpu and libc read from a platform package's name, or undefined when it names none. */
function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((p) => OS.includes(p));
  const cpu = parts.find((p) => CPU.includes(p));
  if (!os || !cpu) return undefined;
  const libc = os === 'linux' ? parts.map((p) => LIBC[p]).find(Boolean) : undefined;
  return { os: [os], cpu: [cpu], ...(libc ? { libc: [libc] } : {}) };
}

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const packages = lock.packages ?? {};
const added = [];
const unknown = [];
for (const [path, entry] of Object.entries(packages)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    // npm places a dependency beside its parent (hoisted) or under it; either location counts.
    const candidates = [`${path}/node_modules/${dep}`, `node_modules/${dep}`];
    if (candidates.some((c) => packages[c])) continue;
    const platform = platformOf(dep);
    if (!platform || !/^\d+\.\d+\.\d+/.test(version)) {
      unknown.push(`${dep}@${version} (optional dependency of ${path || 'the project'})`);
      continue;
    }
    const flags = Object.fromEntries(['dev', 'peer'].filter((f) => entry[f]).map((f) => [f, true]));
    packages[`node_modules/${dep}`] = { version, ...flags, optional: true, ...platform };
    added.push(`${dep}@${version}`);
  }
}

/** The registry's dist.integrity of name@version, or undefined when it gives none. */
function registryIntegrity(name, version) {
  try {
    const out = execFileSync('npm', ['view', `${name}@${version}`, 'dist.integrity', '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 60_000 });
    const integrity = JSON.parse(out || 'null');
    return typeof integrity === 'string' && integrity.startsWith('sha') ? integrity : undefined;
  } catch {
    return undefined;
  }
}

// Entries npm writes itself carry `integrity`; a bundled package (inBundle) is verified through
// its parent's tarball and a link has no tarball, so neither needs one.
const unverified = Object.entries(packages).filter(([path, e]) => path && !e.link && !e.inBundle && !e.integrity && platformOf(path.split('node_modules/').pop()));
const withoutIntegrity = [];
const verified = [];
if (!process.argv.includes('--check')) {
  for (const [path, entry] of unverified) {
    const name = path.split('node_modules/').pop();
    const integrity = registryIntegrity(name, entry.version);
    if (!integrity) {
      withoutIntegrity.push(`${name}@${entry.version}`);
      continue;
    }
    // npm's own key order: integrity right after version (resolved is left out, as in every entry here).
    packages[path] = { version: entry.version, integrity, ...entry };
    verified.push(`${name}@${entry.version}`);
  }
}

if (process.argv.includes('--check')) {
  if (added.length || unverified.length) {
    console.log(`package-lock.json lacks ${added.length} platform entries npm ci needs and the integrity of ${unverified.length}; run node .ci/complete-lock.mjs and commit the lock`);
    process.exit(1);
  }
} else if (added.length || verified.length) {
  // Keep npm's own order (sorted paths) so a later npm install rewrites the file with few changes.
  lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
  writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
  if (added.length) console.log(`package-lock.json: added ${added.length} platform entries npm ci needs: ${added.join(', ')}`);
  if (verified.length) console.log(`package-lock.json: added the registry's integrity to ${verified.length} entries: ${verified.join(', ')}`);
}
if (withoutIntegrity.length) console.log(`package-lock.json: the registry gave no integrity for ${withoutIntegrity.join(', ')} (npm ci on that platform installs them unverified)`);
if (unknown.length) console.log(`package-lock.json: optional dependencies without an entry and without a platform in their name (npm ci may refuse the lock): ${unknown.join(', ')}`);
