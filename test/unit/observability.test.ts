/**
 * EMF metrics (lambda/core/observability.ts): each count is one EMF line in the configured CloudWatch
 * namespace, with `service` and at most one bounded dimension; the tenant's namespace is metadata,
 * never a dimension; zero counts write nothing; disabled metrics write nothing.
 */
type Observability = typeof import('../../lambda/core/observability');

function load(env: Record<string, string>): Observability {
  Object.assign(process.env, env);
  let mod: Observability | undefined;
  jest.isolateModules(() => {
    mod = require('../../lambda/core/observability') as Observability;
  });
  return mod as Observability;
}

function captureStdout(run: () => void): Record<string, unknown>[] {
  const lines: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    run();
  } finally {
    spy.mockRestore();
  }
  return lines.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('EMF metrics', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it('writes a count with its bounded dimension and the namespace as metadata only', () => {
    const o = load({ POWERTOOLS_METRICS_DISABLED: 'false', POWERTOOLS_METRICS_NAMESPACE: 'MsgTest', POWERTOOLS_SERVICE_NAME: 'messaging' });
    const [line, ...rest] = captureStdout(() => o.countMetric(o.METRIC.consumed, 3, { namespace: 'acme', dimensions: { kind: 'queue' } }));
    expect(rest).toEqual([]);
    expect(line).toMatchObject({ MessagesConsumed: 3, service: 'messaging', kind: 'queue', namespace: 'acme' });
    const aws = line._aws as { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] };
    expect(aws.CloudWatchMetrics).toEqual([
      { Namespace: 'MsgTest', Dimensions: [['service', 'kind']], Metrics: [{ Name: 'MessagesConsumed', Unit: 'Count' }] },
    ]);
  });

  it('keeps the dimensions of one metric off the next', () => {
    const o = load({ POWERTOOLS_METRICS_DISABLED: 'false' });
    const lines = captureStdout(() => {
      o.countMetric(o.METRIC.rateLimited, 1, { namespace: 'a', dimensions: { category: 'publish' } });
      o.countMetric(o.METRIC.published, 2, { namespace: 'b' });
    });
    expect(lines).toHaveLength(2);
    const dims = lines.map((l) => (l._aws as { CloudWatchMetrics: { Dimensions: string[][] }[] }).CloudWatchMetrics[0].Dimensions);
    expect(dims).toEqual([[['service', 'category']], [['service']]]);
    expect(lines[1]).toMatchObject({ MessagesPublished: 2, namespace: 'b' });
    expect(lines[1]).not.toHaveProperty('category');
  });

  it('writes nothing for a zero count', () => {
    const o = load({ POWERTOOLS_METRICS_DISABLED: 'false' });
    expect(captureStdout(() => o.countMetric(o.METRIC.acked, 0))).toEqual([]);
  });

  it('writes nothing when POWERTOOLS_METRICS_DISABLED is true (the local runtime default)', () => {
    const o = load({ POWERTOOLS_METRICS_DISABLED: 'true' });
    expect(captureStdout(() => o.countMetric(o.METRIC.published, 5, { namespace: 'acme' }))).toEqual([]);
  });

  it('flushing an empty buffer (a request that counted nothing) logs no warning', () => {
    const o = load({ POWERTOOLS_METRICS_DISABLED: 'false', POWERTOOLS_LOG_LEVEL: 'DEBUG' });
    expect(captureStdout(() => o.metrics.publishStoredMetrics())).toEqual([]);
  });
});
