/**
 * The consume time without the long-poll wait (docs/operate.md): `timeConsume` of
 * lambda/core/observability.ts records a consume's handler time less the waits reported from inside it
 * (lambda/logs/storage/log-arrivals.ts `watchArrivals`), as the EMF metric `ConsumeTimeWithoutWait`.
 */
export {};

type Observability = typeof import('../../lambda/core/observability');
type Arrivals = typeof import('../../lambda/logs/storage/log-arrivals');

function load(): { o: Observability; arrivals: Arrivals } {
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
  let o: Observability | undefined;
  let arrivals: Arrivals | undefined;
  jest.isolateModules(() => {
    o = require('../../lambda/core/observability') as Observability;
    arrivals = require('../../lambda/logs/storage/log-arrivals') as Arrivals;
  });
  return { o: o!, arrivals: arrivals! };
}

/** EMF lines written while `run` runs. */
async function emfLines(run: () => Promise<unknown>): Promise<Record<string, any>[]> {
  const lines: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    await run();
  } finally {
    spy.mockRestore();
  }
  return lines.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((l) => l._aws);
}

/** One wait of a watch of `id`'s arrivals, as a consume's wait for news makes it. */
async function waitOnce(arrivals: Arrivals, id: string, ms: number): Promise<boolean> {
  const watch = arrivals.watchArrivals(id);
  try {
    return await watch.wait(ms);
  } finally {
    watch.close();
  }
}

const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

describe('consume time without the long-poll wait', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it('records the work of a consume and leaves out the time it waited for arrivals', async () => {
    const { o, arrivals } = load();
    let result: string | undefined;
    const started = performance.now();
    const [line, ...rest] = await emfLines(async () => {
      result = await o.timeConsume('stream', async () => {
        busy(20);
        await waitOnce(arrivals, 'stream-1', 400);
        busy(20);
        return 'messages';
      });
    });
    expect(result).toBe('messages');
    expect(performance.now() - started).toBeGreaterThanOrEqual(400);
    expect(rest).toEqual([]);
    expect(line).toMatchObject({ service: expect.any(String), kind: 'stream' });
    expect(line._aws.CloudWatchMetrics[0]).toMatchObject({ Dimensions: [['service', 'kind']], Metrics: [{ Name: 'ConsumeTimeWithoutWait', Unit: 'Milliseconds' }] });
    // About the 40 ms of work; nowhere near the 400 ms wait.
    expect(line.ConsumeTimeWithoutWait).toBeGreaterThanOrEqual(35);
    expect(line.ConsumeTimeWithoutWait).toBeLessThan(300);
  });

  it('counts only the part of a wait that elapsed when an arrival ends it early', async () => {
    const { o, arrivals } = load();
    const [line] = await emfLines(() =>
      o.timeConsume('subscription', async () => {
        setTimeout(() => arrivals.announceArrival('sub-1'), 50);
        await waitOnce(arrivals, 'sub-1', 5000);
        busy(30);
      }),
    );
    expect(line.kind).toBe('subscription');
    expect(line.ConsumeTimeWithoutWait).toBeGreaterThanOrEqual(25);
    expect(line.ConsumeTimeWithoutWait).toBeLessThan(1000);
  });

  it('leaves out a wait ended by an arrival announced from another request, as a publish is', async () => {
    const { o, arrivals } = load();
    // Scheduled before the consume starts: the announcement runs outside the consume's context,
    // as a publish's does (another request), not inside it.
    const publish = new Promise<void>((resolve) => setTimeout(() => resolve(arrivals.announceArrival('sub-2')), 400));
    const [line] = await emfLines(() =>
      o.timeConsume('subscription', async () => {
        busy(20);
        const watch = arrivals.watchArrivals('sub-2');
        try {
          await expect(watch.wait(5_000)).resolves.toBe(true);
        } finally {
          watch.close();
        }
      }),
    );
    await publish;
    // About the 20 ms of work; nowhere near the 400 ms the consume waited for the arrival.
    expect(line.ConsumeTimeWithoutWait).toBeGreaterThanOrEqual(15);
    expect(line.ConsumeTimeWithoutWait).toBeLessThan(300);
  });

  it('keeps the waits of concurrent consumes apart', async () => {
    const { o, arrivals } = load();
    const lines = await emfLines(() =>
      Promise.all([
        o.timeConsume('stream', () => waitOnce(arrivals, 'a', 300)),
        o.timeConsume('queue', async () => busy(10)),
      ]),
    );
    expect(lines.map((l) => l.kind).sort()).toEqual(['queue', 'stream']);
    for (const l of lines) expect(l.ConsumeTimeWithoutWait).toBeLessThan(250);
  });

  it('records nothing for a consume that throws, and ignores waits outside a consume', async () => {
    const { o, arrivals } = load();
    const lines = await emfLines(async () => {
      await expect(o.timeConsume('queue', async () => { throw new Error('QUEUE_NOT_FOUND'); })).rejects.toThrow('QUEUE_NOT_FOUND');
      await waitOnce(arrivals, 'nobody', 10);
      o.waitedFor(1000);
    });
    expect(lines).toEqual([]);
  });
});

describe('arrivals watched across a consume', () => {
  it('wakes the next wait at once for an arrival announced while the consume was not waiting, once', async () => {
    const { arrivals } = load();
    const watch = arrivals.watchArrivals('log-1');
    try {
      arrivals.announceArrival('log-1'); // during a read, before the first wait
      arrivals.announceArrival('log-2'); // another log's arrival wakes nothing here
      const t0 = performance.now();
      await expect(watch.wait(5_000)).resolves.toBe(true);
      expect(performance.now() - t0).toBeLessThan(1_000);
      // Spent by that wait: the next one waits its time out.
      await expect(watch.wait(50)).resolves.toBe(false);
      setTimeout(() => arrivals.announceArrival('log-1'), 20);
      await expect(watch.wait(5_000)).resolves.toBe(true);
    } finally {
      watch.close();
    }
    // Closed: an arrival no longer reaches it, and it holds no listener.
    arrivals.announceArrival('log-1');
    await expect(watch.wait(30)).resolves.toBe(false);
  });
});
