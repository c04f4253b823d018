// An app's AI tab: the gateway's settings (ai_config_get / ai_config_set) and its usage between two dates, by day
// (a bar chart with the same numbers in a table), by model and by end user.
import { useState } from 'preact/hooks';
import type { AppTabProps } from './tabs.ts';
import { ai, type AiConfig, type AiConfigChange, type AiUsage, type Totals } from '../../api/ai.ts';
import { BarChart, dailyBars } from '../../chart.tsx';
import { Facts } from '../../facts.tsx';
import { useCan } from '../../session.ts';
import { Field, Form, isoDay, Loading, Table, text, useLoad, when } from '../../ui.tsx';

export default function AiTab({ app }: AppTabProps) {
  return (
    <>
      <h2>AI</h2>
      <Settings appId={app.app_id} />
      <Usage appId={app.app_id} />
    </>
  );
}

const shown = (v: string | number | null | undefined): string => (v === null || v === undefined ? 'not set' : String(v));

function Settings({ appId }: { appId: string }) {
  const config = useLoad(() => ai.config(appId), [appId]);
  const canWrite = useCan('developer');
  return (
    <section aria-labelledby="ai-settings">
      <h3 id="ai-settings">Settings</h3>
      <Loading loaded={config}>
        {(c) => (
          <>
            <Facts label="AI settings" facts={settingFacts(c)} />
            {canWrite && <SettingsForm appId={appId} config={c} saved={config.reload} />}
          </>
        )}
      </Loading>
    </section>
  );
}

function settingFacts(c: AiConfig): Array<[string, string]> {
  return [
    ['Default model', shown(c.defaultModel)],
    ['Own provider key', c.byokKeySet ? `set (${c.byokKeyHint ?? 'hidden'})` : 'not set: platform credits pay'],
    ['Max tokens per request', shown(c.maxTokensPerRequest)],
    ['Allowed models', c.allowedModels ? c.allowedModels.join(', ') : 'any'],
    ['End-user daily token limit', shown(c.endUserDailyTokenLimit)],
    ['Updated', c.updatedAt ? when(c.updatedAt) : 'never'],
  ];
}

const count = (d: FormData, name: string): number | null => {
  const v = text(d, name);
  return v === undefined ? null : Number(v);
};

/** The form's fields as ai_config_set's change: an empty field clears its setting; the own key is kept unless typed or removed. */
function configChange(d: FormData): AiConfigChange {
  const models = text(d, 'allowedModels')?.split(/[\s,]+/).filter(Boolean);
  const change: AiConfigChange = {
    defaultModel: text(d, 'defaultModel') ?? null,
    maxTokensPerRequest: count(d, 'maxTokensPerRequest'),
    allowedModels: models?.length ? models : null,
    endUserDailyTokenLimit: count(d, 'endUserDailyTokenLimit'),
  };
  const key = text(d, 'byokKey');
  if (key) change.byokKey = key;
  else if (d.get('removeKey')) change.byokKey = null;
  return change;
}

function SettingsForm({ appId, config, saved }: { appId: string; config: AiConfig; saved: () => Promise<void> }) {
  const save = async (d: FormData) => {
    await ai.setConfig(appId, configChange(d));
    await saved();
  };
  return (
    <Form label="AI settings" button="Save settings" submit={save}>
      <div class="row">
        <Field label="Default model" name="defaultModel" placeholder="openai/gpt-4o-mini" defaultValue={config.defaultModel ?? ''} maxLength={200} />
        <Field label="Max tokens per request" name="maxTokensPerRequest" type="number" min={1} max={100000} defaultValue={shownNumber(config.maxTokensPerRequest)} />
        <Field label="End-user daily token limit" name="endUserDailyTokenLimit" type="number" min={1} defaultValue={shownNumber(config.endUserDailyTokenLimit)} />
      </div>
      <Field label="Allowed models (comma-separated; empty: any)" name="allowedModels" defaultValue={config.allowedModels?.join(', ') ?? ''} />
      <Field label="Own provider key (empty: keep)" name="byokKey" type="password" autoComplete="off" minLength={8} />
      {config.byokKeySet && (
        <label>
          <input type="checkbox" name="removeKey" /> Remove the own provider key
        </label>
      )}
    </Form>
  );
}

const shownNumber = (n: number | null): string => (n === null ? '' : String(n));

// Cents for dollars; three significant digits below a dollar, where a call costs millionths.
const CENTS = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });
const FRACTIONS = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumSignificantDigits: 3 });
const usd = (n: number): string => (n >= 1 ? CENTS : FRACTIONS).format(n);

function Usage({ appId }: { appId: string }) {
  const [range, setRange] = useState(() => ({ start: isoDay(Date.now() - 29 * 86_400_000), end: isoDay(Date.now()) }));
  const usage = useLoad(() => ai.usage(appId, range.start, range.end), [appId, range.start, range.end]);
  // The same dates again read the usage again (new calls since).
  const pick = async (d: FormData) => {
    const start = text(d, 'start') ?? range.start;
    const end = text(d, 'end') ?? range.end;
    if (start === range.start && end === range.end) await usage.reload();
    else setRange({ start, end });
  };
  return (
    <section aria-labelledby="ai-usage">
      <h3 id="ai-usage">Usage</h3>
      <Form label="Usage dates" button="Show" inline submit={pick}>
        <Field label="From" name="start" type="date" required defaultValue={range.start} />
        <Field label="To" name="end" type="date" required defaultValue={range.end} />
      </Form>
      <Loading loaded={usage}>{(u) => <UsageReport usage={u} />}</Loading>
    </section>
  );
}

function UsageReport({ usage: u }: { usage: AiUsage }) {
  const tokens = new Map(u.byDay.map((d) => [d.date, d.tokens]));
  return (
    <>
      <Facts
        label="AI usage totals"
        facts={[
          ['Requests', String(u.byDay.reduce((n, d) => n + d.requests, 0))],
          ['Tokens', u.totalTokens.toLocaleString()],
          ['Cost', usd(u.totalCost)],
          ['Paid by platform credits', usd(u.creditsUsed)],
        ]}
      />
      <BarChart title={`Tokens per day, ${u.startDate} to ${u.endDate}`} bars={dailyBars(u.startDate, u.endDate, tokens)} />
      <TotalsTable caption="AI usage by day" first="Date" rows={u.byDay.map((d) => [d.date, d])} empty="No calls in these dates." />
      <TotalsTable caption="AI usage by model" first="Model" rows={Object.entries(u.byModel)} />
      <TotalsTable
        caption="AI usage by end user"
        first="End user"
        rows={[...Object.entries(u.byUser), ...(u.otherUsers ? [[`${u.otherUsers.users} other end users`, u.otherUsers] as [string, Totals]] : [])]}
      />
    </>
  );
}

function TotalsTable({ caption, first, rows, empty }: { caption: string; first: string; rows: Array<[string, Totals]>; empty?: string }) {
  if (!rows.length) return empty ? <p class="muted">{empty}</p> : null;
  return (
    <>
      <h4>{caption}</h4>
      <Table caption={caption} columns={[first, 'Requests', 'Tokens', 'Cost']}>
        {rows.map(([key, t]) => (
          <tr key={key}>
            <td>{key}</td>
            <td>{t.requests}</td>
            <td>{t.tokens.toLocaleString()}</td>
            <td>{usd(t.cost)}</td>
          </tr>
        ))}
      </Table>
    </>
  );
}
