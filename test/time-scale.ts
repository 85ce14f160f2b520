/**
 * Every jest timeout at the suite's time scale (./fixtures/time-scale.ts): the default, a file's
 * `jest.setTimeout` and the timeout a test or hook is given. A timeout only bounds how long a
 * test may hang; what a test asserts stays as written.
 *
 * jest.setTimeout stores its value under a global symbol that jest-circus reads when the file's
 * run starts (jest-runtime `setTimeout`, jest-circus `run_start`), so a setter on that symbol
 * scales it; the globals `it`, `test` and the hooks are wrapped for their own timeout argument.
 */
import { timeScale } from './fixtures/time-scale';

const scale = timeScale();
if (scale > 1) {
  const times = (ms: unknown) => (typeof ms === 'number' && ms > 0 ? Math.round(ms * scale) : ms);
  let current = times(5000) as number;
  Object.defineProperty(globalThis, Symbol.for('TEST_TIMEOUT_SYMBOL'), {
    configurable: true,
    get: () => current,
    set: (ms: number) => {
      current = times(ms) as number;
    },
  });
  type Fn = ((...args: unknown[]) => unknown) & Record<string, unknown>;
  const g = globalThis as unknown as Record<string, Fn>;
  // A test's timeout is its third argument (`it(name, fn, ms)`), a hook's its second.
  const wrap = (f: Fn, at: number): Fn => Object.assign((...args: unknown[]) => f(...args.map((a, i) => (i === at ? times(a) : a))), f);
  for (const name of ['it', 'test']) {
    const scaledTest = wrap(g[name], 2);
    for (const variant of ['only', 'skip', 'failing', 'concurrent']) if (typeof g[name][variant] === 'function') scaledTest[variant] = Object.assign(wrap(g[name][variant] as Fn, 2), g[name][variant]);
    g[name] = scaledTest;
  }
  for (const hook of ['beforeAll', 'afterAll', 'beforeEach', 'afterEach']) g[hook] = wrap(g[hook], 1);
}
