// A function's invocations over time (functions_metrics) as a small inline bar chart: a bar per hour (last day) or
// day (last 30 days), its failed part drawn over it; each bar titled with its numbers, and the totals in words for
// screen readers.
import { useState } from 'preact/hooks';
import { functions, type Bucket, type MetricsBucket } from '../../../api/functions.ts';
import { Loading, useLoad } from '../../../ui.tsx';

const WIDTH = 720;
const HEIGHT = 120;
const WINDOWS: Record<Bucket, string> = { hour: 'Last 24 hours', day: 'Last 30 days' };

const label = (b: MetricsBucket, bucket: Bucket): string => {
  const at = new Date(b.start).toLocaleString(undefined, bucket === 'hour' ? { hour: 'numeric', day: 'numeric', month: 'short' } : { day: 'numeric', month: 'short' });
  return `${at}: ${b.invocations} invocations, ${b.errors} errors${b.invocations ? `, ${b.avg_duration_ms} ms on average` : ''}`;
};

function Bars({ buckets, bucket }: { buckets: MetricsBucket[]; bucket: Bucket }) {
  const busiest = Math.max(0, ...buckets.map((b) => b.invocations));
  const top = Math.max(1, busiest);
  const step = WIDTH / buckets.length;
  const height = (n: number) => (n / top) * (HEIGHT - 4);
  const total = buckets.reduce((t, b) => ({ n: t.n + b.invocations, e: t.e + b.errors }), { n: 0, e: 0 });
  return (
    <svg class="bars" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={`${WINDOWS[bucket]}: ${total.n} invocations, ${total.e} errors; the busiest ${bucket} had ${busiest}`}>
      {buckets.map((b, i) => (
        <g key={b.start}>
          <title>{label(b, bucket)}</title>
          <rect class="all" x={i * step + 1} y={HEIGHT - height(b.invocations)} width={Math.max(1, step - 2)} height={height(b.invocations)} />
          <rect class="failed" x={i * step + 1} y={HEIGHT - height(b.errors)} width={Math.max(1, step - 2)} height={height(b.errors)} />
        </g>
      ))}
    </svg>
  );
}

export function InvocationChart({ appId, name, version }: { appId: string; name: string; version: number }) {
  const [bucket, setBucket] = useState<Bucket>('hour');
  const series = useLoad(() => functions.series(appId, name, bucket), [appId, name, bucket, version]);
  return (
    <figure class="bars-figure">
      <figcaption class="row">
        <label class="field">
          <span>Invocations over</span>
          <select value={bucket} onChange={(e) => setBucket(e.currentTarget.value as Bucket)}>
            {(Object.keys(WINDOWS) as Bucket[]).map((b) => (
              <option key={b} value={b}>
                {WINDOWS[b]}
              </option>
            ))}
          </select>
        </label>
        <span class="muted">bars: invocations; darker: errors</span>
      </figcaption>
      <Loading loaded={series}>{(buckets) => <Bars buckets={buckets} bucket={bucket} />}</Loading>
    </figure>
  );
}
