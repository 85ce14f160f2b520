import { laneShares, nextLatency, SLOW_ENTER_MS, SLOW_LEAVE_MS, type Latency } from '../../lambda/webhooks/rules/delivery-lanes';

const run = (samples: number[], start?: Latency) => samples.reduce<Latency | undefined>((l, d) => nextLatency(l, d), start)!;

describe('delivery lanes', () => {
  it('puts a webhook in the slow lane once its requests average SLOW_ENTER_MS or more', () => {
    expect(run([0, 5, 10]).lane).toBe('fast');
    expect(nextLatency(undefined, SLOW_ENTER_MS).lane).toBe('slow');
    expect(run([200, 200]).lane).toBe('slow');
    // A timeout counts its whole wait: one 30 s timeout after fast requests makes it slow.
    expect(run([1, 1, 1, 30_000]).lane).toBe('slow');
  });

  it('keeps a webhook in its lane inside the gap, so it does not flip each batch', () => {
    const slow = run([200]);
    // An average between SLOW_LEAVE_MS and SLOW_ENTER_MS keeps either lane.
    const mid = (SLOW_LEAVE_MS + SLOW_ENTER_MS) / 2;
    expect(run(Array(20).fill(mid), slow).lane).toBe('slow');
    expect(run(Array(20).fill(mid), run([0])).lane).toBe('fast');
    // Fast answers bring it back.
    expect(run(Array(20).fill(0), slow).lane).toBe('fast');
  });

  it('weighs recent requests: one slow request among fast ones does not move a fast webhook', () => {
    const l = run([10, 10, 10, 300, 10]);
    expect(l.lane).toBe('fast');
    expect(l.ms).toBeGreaterThan(10);
    expect(l.ms).toBeLessThan(SLOW_ENTER_MS);
    expect(nextLatency(undefined, -5).ms).toBe(0);
  });

  it('gives the fast lane the whole share and the slow lane half of it, in jobs and in batches', () => {
    expect(laneShares(50, 10)).toEqual({ fast: { jobs: 50, batches: 5 }, slow: { jobs: 25, batches: 3 } });
    expect(laneShares(1, 10)).toEqual({ fast: { jobs: 1, batches: 1 }, slow: { jobs: 1, batches: 1 } });
    expect(laneShares(0, 10).slow.jobs).toBe(1);
  });
});
