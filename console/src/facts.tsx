// A labelled list of facts (term and value), as a row of small panels: settings, statuses, totals.
export function Facts({ label, facts }: { label: string; facts: ReadonlyArray<readonly [string, string]> }) {
  return (
    <dl class="facts" aria-label={label}>
      {facts.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}
