import { lineChartSvg, ticks } from '../../bench/charts';
import { costChartSvg, depthChartSvg } from '../../bench/queue-charts';
import { listPricePerMillion } from '../../bench/prices';

/** The y coordinate of each point circle, in drawing order. */
const pointYs = (svg: string) => [...svg.matchAll(/<circle cx="[\d.]+" cy="([\d.]+)"/g)].map((m) => Number(m[1]));

describe('bench charts', () => {
  it('picks 1-2-5 ticks for a linear axis and powers of ten for a log axis', () => {
    expect(ticks(0, 23, false)).toEqual([0, 5, 10, 15, 20, 25]);
    expect(ticks(0.12, 14.9, true)).toEqual([0.1, 1, 10, 100]);
  });

  it('draws larger values higher up, on linear and log axes', () => {
    for (const logY of [false, true]) {
      const svg = lineChartSvg({ title: 't', xLabel: 'x', yLabel: 'y', categories: ['a', 'b', 'c'], series: [{ name: 's', values: [1, 10, 100] }], logY });
      const [a, b, c] = pointYs(svg);
      expect(a).toBeGreaterThan(b);
      expect(b).toBeGreaterThan(c);
    }
  });

  it('escapes text and leaves gaps for missing values', () => {
    const svg = lineChartSvg({ title: 'a < b & "c"', xLabel: 'x', yLabel: 'y', categories: ['1', '2', '3'], series: [{ name: 's', values: [1, null, 3] }] });
    expect(svg).toContain('<title>a &lt; b &amp; &quot;c&quot;</title>');
    expect(pointYs(svg)).toHaveLength(2);
    expect(svg).not.toContain('<polyline');
  });

  it('refuses a chart without values', () => {
    expect(() => lineChartSvg({ title: 'empty', xLabel: 'x', yLabel: 'y', categories: ['a'], series: [{ name: 's', values: [null] }] })).toThrow('no values');
  });

  it('prices SQS and SNS + SQS per million messages by request, 10 messages per request at most', () => {
    expect(listPricePerMillion('sqs', 1)).toBe(1.2);
    expect(listPricePerMillion('sqs', 10)).toBe(0.12);
    expect(listPricePerMillion('sqs', 100)).toBe(0.12);
    expect(listPricePerMillion('sns+sqs', 1)).toBe(1.3);
  });

  it('charts the full-stack cost (publish + consume + ack) against both list prices', () => {
    const svg = costChartSvg([
      { batch: 10, lifecycleUsd: 7.94 },
      { batch: 1, lifecycleUsd: 22.95 },
    ]);
    for (const text of ['this service (full stack)', 'SQS alone (requests)', 'SNS + SQS (requests)', '$22.95', '$7.94', '$1.20', '$0.13']) expect(svg).toContain(`>${text}<`);
    // Batch 1 is drawn first, whatever the order of the rows.
    expect(svg.indexOf('>$22.95<')).toBeLessThan(svg.indexOf('>$7.94<'));
  });

  it('charts consume p50 and p99 by queue depth', () => {
    const svg = depthChartSvg([{ depth: 10_000, p50Ms: 9.99, p99Ms: 18.2 }, { depth: 10, p50Ms: 10.14, p99Ms: 19.2 }]);
    expect(svg.indexOf('>10<')).toBeLessThan(svg.indexOf('>10,000<'));
    expect(svg).toContain('>consume p99<');
  });
});
