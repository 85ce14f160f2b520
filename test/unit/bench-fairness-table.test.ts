/**
 * The fairness section's verdict on the fairness target (docs/performance.md) is computed from the run's p99s, never typed:
 * met at or under 2 times the p99 alone, not met above, and not judged beside a webhook of the
 * same namespace (the target is across namespaces).
 */
import { fairnessRatio, fairnessTable, type FairnessRun } from '../../bench/webhooks-fairness-table';

const run = (aloneP99: number, besideP99: number, sameNamespace = false): FairnessRun => ({
  share: 50,
  perSecond: 20,
  windowSeconds: 15,
  rounds: 2,
  sameNamespace,
  batchesAtOnce: 12,
  conditions: [
    { condition: 'alone', p50Ms: 30, p99Ms: aloneP99, fastJobsReceivedPerDelivery: 1, tail: '0 of 6 / 20 / 10' },
    { condition: "beside another namespace's 5 s webhook", p50Ms: 60, p99Ms: besideP99, slowPerSecond: 4.5, fastJobsReceivedPerDelivery: 1.01, slowJobsReceivedPerDelivery: 3.2, tail: '1 of 6 / 900 / 12' },
  ],
});

describe('fairness section (bench/webhooks-fairness-table.ts)', () => {
  it('judges the p99 beside against 2 times the p99 alone, the boundary met', () => {
    expect(fairnessRatio(run(293, 503))).toEqual({ ratio: 1.7, met: true });
    expect(fairnessRatio(run(300, 600))).toEqual({ ratio: 2, met: true });
    // 2.003 times rounds to 2.0 in the table but misses the target: the verdict uses the p99s.
    expect(fairnessRatio(run(300, 601))).toEqual({ ratio: 2, met: false });
    expect(fairnessRatio(run(981, 2552))).toEqual({ ratio: 2.6, met: false });
  });

  it('states the verdict and the figures behind it in the section', () => {
    const met = fairnessTable(run(293, 503));
    expect(met).toContain('This run: 503 ms against 293 ms, 1.7 times: met.');
    expect(met).toContain("| beside another namespace's 5 s webhook | 60 | 503 | 1.7 | 4.5 | 1.01 | 3.2 | 1 of 6 / 900 / 12 |");
    expect(fairnessTable(run(1147, 3078))).toContain('This run: 3,078 ms against 1,147 ms, 2.7 times: not met.');
  });

  it('does not judge a run beside a slow webhook of the same namespace', () => {
    const same = fairnessTable(run(89, 4187, true));
    expect(same).toContain('not judged here');
    expect(same).not.toMatch(/: (not )?met\./);
  });
});
