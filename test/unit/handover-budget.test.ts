import { ByteBudget, ClaimGate, byNamespaceTurns, inFlightWeight } from '../../lambda/schedules/rules/handover-budget';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('byNamespaceTurns', () => {
  it('lets namespaces take turns, keeping each one\'s order', () => {
    const items = ['a1', 'a2', 'a3', 'a4', 'b1', 'c1', 'c2'].map((id) => ({ namespace: id[0], id }));
    expect(byNamespaceTurns(items).map((i) => i.id)).toEqual(['a1', 'b1', 'c1', 'a2', 'c2', 'a3', 'a4']);
  });
});

describe('ByteBudget', () => {
  it('never holds more than its capacity, first come first served', async () => {
    const budget = new ByteBudget(100);
    let held = 0;
    let most = 0;
    const order: number[] = [];
    await Promise.all(
      [60, 30, 50, 100, 10].map((bytes, i) =>
        budget.holding(bytes, async () => {
          held += bytes;
          most = Math.max(most, held);
          order.push(i);
          await sleep(5);
          held -= bytes;
        }),
      ),
    );
    expect(most).toBeLessThanOrEqual(100);
    expect(budget.peak).toBeLessThanOrEqual(100);
    expect(order).toEqual([0, 1, 2, 3, 4]);
  });

  it('runs a part heavier than the whole budget alone', async () => {
    const budget = new ByteBudget(100);
    await expect(budget.holding(250, async () => 'done')).resolves.toBe('done');
    expect(budget.peak).toBe(100);
  });

  it('gives its bytes back when the work fails', async () => {
    const budget = new ByteBudget(100);
    await expect(budget.holding(100, async () => Promise.reject(new Error('send failed')))).rejects.toThrow('send failed');
    await expect(budget.holding(100, async () => 'next')).resolves.toBe('next');
  });

  it('cuts items into parts of at most a quarter of the budget, a heavy item alone', () => {
    const budget = new ByteBudget(400);
    const parts = budget.parts([40, 40, 40, 300, 10], (w) => w);
    expect(parts.map((p) => p.items)).toEqual([[40, 40], [40], [300], [10]]);
  });
});

describe('inFlightWeight', () => {
  it('counts the payload per copy alive during the handover, more with more targets', () => {
    expect(inFlightWeight({ size: 50 * 1024, targets: [{}] })).toBeGreaterThanOrEqual(4 * 50 * 1024);
    expect(inFlightWeight({ size: 1000, targets: [{}, {}, {}] })).toBeGreaterThan(inFlightWeight({ size: 1000, targets: [{}] }));
  });
});

describe('ClaimGate', () => {
  it('admits only what the measured rate finishes before the deadline, at most 5 s of it, and none past it', async () => {
    let t = 0;
    const gate = new ClaimGate(10_000, () => t);
    // Before any handover has finished: the assumed 100 a second, 5 s of it (10 s left).
    expect(gate.room()).toBe(500);
    expect(await gate.admit(100)).toBe(100);
    t = 1000;
    gate.done(100, 100); // 100 a second measured; 5 s of it
    expect(gate.room()).toBe(500);
    expect(await gate.admit(1000)).toBe(500);
    expect(gate.room()).toBe(0);
    // No room: a shard waits for a finish, then gets what the time left allows.
    const waiting = gate.admit(200);
    t = 9000;
    gate.done(500, 500); // 600 in 9 s; 1 s left: room for 66
    expect(await waiting).toBe(66);
    t = 10_000;
    gate.done(66, 0);
    expect(await gate.admit(100)).toBe(0);
  });

  it('answers 0 rather than waiting when nothing is in flight and no room is left', async () => {
    let t = 0;
    const gate = new ClaimGate(500, () => t);
    t = 499;
    expect(gate.room()).toBe(0); // 100 a second, 1 ms left
    expect(await gate.admit(10)).toBe(0);
  });
});
