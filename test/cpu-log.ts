/**
 * With MSG_TEST_CPU_LOG set to a file, each test file appends one JSON line when it ends: its
 * wall time and the CPU its jest process spent meanwhile (user and system, seconds). What
 * balancing `npm test`'s lanes needs besides the wall times: a file that waits on clocks can run
 * beside others, a file that computes only competes with them (bin/test.ts). DynamoDB Local's
 * Java CPU is not included (one JVM serves a whole lane). Without the variable it does nothing.
 */
import { appendFileSync } from 'node:fs';

const out = process.env.MSG_TEST_CPU_LOG;
if (out) {
  const t0 = Date.now();
  const c0 = process.cpuUsage();
  afterAll(() => {
    const c = process.cpuUsage(c0);
    const file = (expect.getState().testPath ?? '').replace(`${process.cwd()}/`, '');
    appendFileSync(out, `${JSON.stringify({ file, wallS: (Date.now() - t0) / 1000, cpuS: (c.user + c.system) / 1e6 })}\n`);
  });
}
