// A bar chart of served and refused reads, drawn as SVG: served bars in the
// accent colour with refused ones stacked on top in red.

const W = 720;
const H = 180;
const PAD = { left: 40, right: 8, top: 10, bottom: 24 };

function niceMax(n) {
  if (n <= 4) return 4;
  const p = 10 ** Math.floor(Math.log10(n));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= n) return m * p;
  return 10 * p;
}

/**
 * Chart draws buckets [{start, served, refused}] with a label function for
 * the x axis (every tick-th bucket is labelled).
 */
export function Chart({ title, buckets, label, tick, id }) {
  const max = niceMax(Math.max(0, ...buckets.map((b) => b.served + b.refused)));
  const iw = W - PAD.left - PAD.right;
  const ih = H - PAD.top - PAD.bottom;
  const bw = iw / Math.max(buckets.length, 1);
  const y = (v) => PAD.top + ih - (v / max) * ih;
  const served = buckets.reduce((s, b) => s + b.served, 0);
  const refused = buckets.reduce((s, b) => s + b.refused, 0);
  return (
    <figure class="chart" aria-labelledby={id + '-title'}>
      <figcaption id={id + '-title'}>
        <strong>{title}</strong>{' '}
        <span class="legend">
          <span class="swatch served" aria-hidden="true"></span> served <span data-testid={id + '-served'}>{served}</span>
          <span class="swatch refused" aria-hidden="true"></span> refused <span data-testid={id + '-refused'}>{refused}</span>
        </span>
      </figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${title}: ${served} served, ${refused} refused`} preserveAspectRatio="none">
        {[0, 0.5, 1].map((f) => (
          <g key={f}>
            <line class="grid" x1={PAD.left} x2={W - PAD.right} y1={y(max * f)} y2={y(max * f)} />
            <text class="axis" x={PAD.left - 6} y={y(max * f) + 4} text-anchor="end">{Math.round(max * f)}</text>
          </g>
        ))}
        {buckets.map((b, i) => {
          const x = PAD.left + i * bw + bw * 0.12;
          const w = Math.max(bw * 0.76, 1);
          return (
            <g key={i}>
              <title>{`${label(b, true)}: ${b.served} served, ${b.refused} refused`}</title>
              {b.served > 0 && <rect class="served" x={x} width={w} y={y(b.served)} height={y(0) - y(b.served)} />}
              {b.refused > 0 && <rect class="refused" x={x} width={w} y={y(b.served + b.refused)} height={y(b.served) - y(b.served + b.refused)} />}
              {i % tick === 0 && (
                <text class="axis" x={x + w / 2} y={H - 6} text-anchor="middle">{label(b, false)}</text>
              )}
            </g>
          );
        })}
      </svg>
    </figure>
  );
}
