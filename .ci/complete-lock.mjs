#!/usr/bin/env node
// Adds to package-lock.json the entries of platform-specific optional packages (for example
// @swc/core-darwin-arm64) that npm left out because the registry this machine uses does not serve
// them. `npm install` then writes a lock without them, and `npm ci` refuses that lock as out of
// sync (npm/cli issues 4828 and 9846). On Linux, `npm ci` skips these packages for their os/cpu
// and never downloads them, so an entry with version, os, cpu and libc is all it needs.
//
//   node .ci/complete-lock.mjs           add what is missing (idempotent), print what was added
//   node .ci/complete-lock.mjs --check   exit 1 when entries are missing, change nothing
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

if (process.argv.includes('--check')) {
  if (added.length) {
    console.log(`package-lock.json lacks ${added.length} platform entries npm ci needs; run node .ci/complete-lock.mjs and commit the lock`);
    process.exit(1);
  }
} else if (added.length) {
  // Keep npm's own order (sorted paths) so a later npm install rewrites the file with few changes.
  lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
  writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(`package-lock.json: added ${added.length} platform entries npm ci needs: ${added.join(', ')}`);
}
if (unknown.length) console.log(`package-lock.json: optional dependencies without an entry and without a platform in their name (npm ci may refuse the lock): ${unknown.join(', ')}`);
