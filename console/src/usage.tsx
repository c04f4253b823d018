// Usage against the plan's allowances, as GET /dashboard/billing gives it: the account's, or one app's share of it.
import type { BillingOverview, LimitedMeter } from './api/billing.ts';
import { bytes, Table } from './ui.tsx';

const BYTES = new Set<LimitedMeter>(['database_bytes', 'bandwidth_bytes', 'storage_bytes']);

/** A meter's quantity as a person reads it: bytes in KB/MB/GB, credits in USD, the rest as counts. */
export function formatMeter(meter: string, n: number): string {
  if (meter === 'ai_credits') return `$${n.toFixed(n < 1 ? 4 : 2)}`;
  return BYTES.has(meter as LimitedMeter) ? bytes(n) : n.toLocaleString();
}

export const meterLabel = (meter: string): string => meter.replaceAll('_', ' ');

export function UsageTable({ billing, caption }: { billing: BillingOverview; caption: string }) {
  const meters = Object.keys(billing.usage) as LimitedMeter[];
  return (
    <Table caption={caption} columns={['Meter', 'Used', 'Allowance', 'Share']}>
      {meters.map((m) => {
        const limit = billing.limits[m];
        const pct = billing.percentages[m];
        return (
          <tr key={m}>
            <td>{meterLabel(m)}</td>
            <td>{formatMeter(m, billing.usage[m])}</td>
            <td>{limit === null ? 'unlimited' : formatMeter(m, limit)}</td>
            <td>
              {pct === null ? (
                '—'
              ) : (
                <>
                  <meter min={0} max={100} high={80} value={Math.min(pct, 100)} aria-label={`${meterLabel(m)} used`} /> {pct}%
                </>
              )}
            </td>
          </tr>
        );
      })}
    </Table>
  );
}
