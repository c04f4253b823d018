// A list of facts (term and value), as a row of small panels: settings, statuses, totals.
import type { ComponentChildren } from 'preact';

export type Fact = readonly [string, ComponentChildren];

/** `label` names the list for screen readers where no heading of its own does. */
export function Facts({ label, facts }: { label?: string; facts: ReadonlyArray<Fact> }) {
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
