/**
 * SVG charts of bench results for the README, written by `npm run bench`. Plain SVG
 * text, no dependency: a line chart with categorical x values and a linear or logarithmic y
 * axis, one line per series, labelled points and a legend. GitHub renders the files inline.
 *
 * Fed by the rows the benches already compute (bench/run.ts does the mapping), so the charts
 * never hold numbers of their own.
 */

interface Series {
  name: string;
  /** One value per category, in category order; null leaves a gap. */
  values: (number | null)[];
  /** Dashed lines for reference prices, solid for measurements. */
  dashed?: boolean;
}

export interface LineChart {
  title: string;
  subtitle?: string;
  xLabel: string;
  yLabel: string;
  categories: string[];
  series: Series[];
  /** Logarithmic y axis (values spanning orders of magnitude). @default false */
  logY?: boolean;
  /** Formats point labels and y ticks. @default two significant digits */
  format?: (v: number) => string;
}

const W = 720;
const H = 420;
const M = { top: 70, right: 200, bottom: 60, left: 80 };
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const num = (n: number) => Number(n.toFixed(1));
const sig2 = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v >= 1 ? v.toFixed(2) : Number(v.toPrecision(2)).toString());

/** Round tick values covering [lo, hi]: 1-2-5 steps (linear) or powers of ten (log). */
export function ticks(lo: number, hi: number, log: boolean): number[] {
  if (log) {
    const out: number[] = [];
    for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) out.push(10 ** e);
    return out;
  }
  const span = hi - lo || 1;
  const raw = span / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let v = Math.floor(lo / step) * step; v <= hi + step / 2; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

/** The chart as an SVG document. */
export function lineChartSvg(c: LineChart): string {
  const fmt = c.format ?? sig2;
  const values = c.series.flatMap((s) => s.values).filter((v): v is number => v !== null && Number.isFinite(v) && (!c.logY || v > 0));
  if (values.length === 0) throw new Error(`chart "${c.title}" has no values`);
  const yTicks = ticks(c.logY ? Math.min(...values) : Math.min(0, ...values), Math.max(...values), !!c.logY);
  const [y0, y1] = [yTicks[0], yTicks[yTicks.length - 1]];
  const plotW = W - M.left - M.right;
  const plotH = H - M.top - M.bottom;
  const t = (v: number) => (c.logY ? (Math.log10(v) - Math.log10(y0)) / (Math.log10(y1) - Math.log10(y0)) : (v - y0) / (y1 - y0 || 1));
  const y = (v: number) => num(M.top + plotH * (1 - t(v)));
  const step = plotW / Math.max(1, c.categories.length);
  const x = (i: number) => num(M.left + step * (i + 0.5));

  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" font-family="-apple-system, Segoe UI, Helvetica, Arial, sans-serif" font-size="12">`,
    `<title>${esc(c.title)}</title>`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="${M.left}" y="28" font-size="16" font-weight="600">${esc(c.title)}</text>`,
  ];
  if (c.subtitle) out.push(`<text x="${M.left}" y="48" fill="#555">${esc(c.subtitle)}</text>`);
  for (const v of yTicks) {
    out.push(`<line x1="${M.left}" x2="${M.left + plotW}" y1="${y(v)}" y2="${y(v)}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${M.left - 8}" y="${y(v) + 4}" text-anchor="end" fill="#555">${esc(fmt(v))}</text>`);
  }
  out.push(`<line x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${M.top + plotH}" stroke="#999"/>`);
  out.push(`<line x1="${M.left}" x2="${M.left + plotW}" y1="${M.top + plotH}" y2="${M.top + plotH}" stroke="#999"/>`);
  c.categories.forEach((cat, i) => out.push(`<text x="${x(i)}" y="${M.top + plotH + 18}" text-anchor="middle">${esc(cat)}</text>`));
  out.push(`<text x="${M.left + plotW / 2}" y="${H - 14}" text-anchor="middle" fill="#333">${esc(c.xLabel)}</text>`);
  out.push(`<text transform="translate(18 ${M.top + plotH / 2}) rotate(-90)" text-anchor="middle" fill="#333">${esc(c.yLabel)}</text>`);

  c.series.forEach((s, si) => {
    const color = COLORS[si % COLORS.length];
    const points = s.values.map((v, i) => (v === null || (c.logY && v <= 0) ? null : ([x(i), y(v), v] as const)));
    const segments: string[][] = [[]];
    for (const p of points) {
      if (p) segments[segments.length - 1].push(`${p[0]},${p[1]}`);
      else segments.push([]);
    }
    for (const seg of segments.filter((g) => g.length > 1)) {
      out.push(`<polyline fill="none" stroke="${color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''} points="${seg.join(' ')}"/>`);
    }
    for (const p of points) {
      if (!p) continue;
      out.push(`<circle cx="${p[0]}" cy="${p[1]}" r="3.5" fill="${color}"/>`);
      // Alternate series label above and below their points, so close lines stay readable.
      out.push(`<text x="${p[0] + 6}" y="${si % 2 === 0 ? p[1] - 6 : p[1] + 15}" fill="${color}" font-size="11">${esc(fmt(p[2]))}</text>`);
    }
    const ly = M.top + 8 + si * 20;
    const lx = M.left + plotW + 16;
    out.push(`<line x1="${lx}" x2="${lx + 22}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`);
    out.push(`<text x="${lx + 28}" y="${ly + 4}">${esc(s.name)}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
