/** A small line chart of a polled count (SVG, no library), with its numbers for screen readers. */
export interface Sample {
  at: number;
  value: number;
}

const W = 320;
const H = 80;

export function Sparkline({ samples, label, windowMs }: { samples: Sample[]; label: string; windowMs: number }) {
  const now = samples.length ? samples[samples.length - 1].at : Date.now();
  const max = Math.max(1, ...samples.map((s) => s.value));
  const x = (at: number) => W - ((now - at) / windowMs) * W;
  const y = (v: number) => H - 4 - (v / max) * (H - 8);
  const points = samples.map((s) => `${x(s.at).toFixed(1)},${y(s.value).toFixed(1)}`).join(' ');
  const last = samples[samples.length - 1]?.value;
  const summary = samples.length
    ? `${label}: ${last} now; between ${Math.min(...samples.map((s) => s.value))} and ${max} over the last ${Math.round((now - samples[0].at) / 1000)} s`
    : `${label}: no samples yet`;
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${W} ${H}`} width={W} height={H} role="img" aria-label={summary}>
        <line x1={0} y1={H - 4} x2={W} y2={H - 4} class="axis" />
        <text x={2} y={10} class="tick">
          {max}
        </text>
        {samples.length > 1 && <polyline points={points} class="line" fill="none" />}
        {samples.length === 1 && <circle cx={x(samples[0].at)} cy={y(samples[0].value)} r={2} class="dot" />}
      </svg>
      <figcaption>{summary}</figcaption>
    </figure>
  );
}
