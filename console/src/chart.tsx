// A bar chart drawn as inline SVG (no chart library: a few hundred bytes instead of tens of kilobytes), with the same
// numbers in a table for screen readers and for reading exact values.
import { useState } from 'preact/hooks';
import { isoDay } from './ui.tsx';

export interface Bar {
  label: string;
  value: number;
}

const WIDTH = 640;
const HEIGHT = 160;
const GAP = 2;

/** Bars of `bars` scaled to the largest; `format` renders a value (axis, tooltip, table). */
export function BarChart({ title, bars, format = (n) => n.toLocaleString() }: { title: string; bars: Bar[]; format?: (n: number) => string }) {
  const [showTable, setShowTable] = useState(false);
  const max = Math.max(0, ...bars.map((b) => b.value));
  const step = bars.length ? WIDTH / bars.length : WIDTH;
  return (
    <figure class="chart">
      <figcaption>
        {title}: most {format(max)}{' '}
        <button type="button" class="link" aria-expanded={showTable} onClick={() => setShowTable(!showTable)}>
          {showTable ? 'Hide the numbers' : 'Show the numbers'}
        </button>
      </figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={`${title}, ${bars.length} bars`} preserveAspectRatio="none">
        {bars.map((b, i) => {
          const h = max ? Math.max(b.value ? 1 : 0, (b.value / max) * HEIGHT) : 0;
          return (
            <rect key={b.label} x={i * step + GAP / 2} y={HEIGHT - h} width={Math.max(1, step - GAP)} height={h}>
              <title>{`${b.label}: ${format(b.value)}`}</title>
            </rect>
          );
        })}
      </svg>
      {showTable && (
        <table>
          <caption class="visually-hidden">{title}</caption>
          <tbody>
            {bars.map((b) => (
              <tr key={b.label}>
                <th scope="row">{b.label}</th>
                <td>{format(b.value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </figure>
  );
}

/** Every day from `start` to `end` (YYYY-MM-DD) with its value in `values`, 0 when it has none. */
export function dailyBars(start: string, end: string, values: ReadonlyMap<string, number>): Bar[] {
  const bars: Bar[] = [];
  for (let t = Date.parse(start); t <= Date.parse(end); t += 86_400_000) {
    const day = isoDay(t);
    bars.push({ label: day, value: values.get(day) ?? 0 });
  }
  return bars;
}
