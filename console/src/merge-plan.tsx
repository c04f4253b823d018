// A branch's merge as a person reads it before approving or merging it: the changes in words, the SQL production
// runs, a marked warning naming the statements that destroy data, and what the merge cannot carry over.
import type { MergePlan } from './api/branches.ts';

/**
 * `level`: the level of the plan's headings, under the caller's own; `id`: a prefix unique on the page for the ids
 * that name the lists by their headings.
 */
export function MergePlanView({ plan, level, id }: { plan: MergePlan; level: 3 | 4; id: string }) {
  const H = level === 3 ? 'h3' : 'h4';
  return (
    <div class="merge-plan">
      <H id={`${id}-changes`}>Changes</H>
      {plan.changes.length === 0 ? (
        <p class="muted">No changes.</p>
      ) : (
        <ul aria-labelledby={`${id}-changes`}>
          {plan.changes.map((c, i) => (
            <li key={i}>{c}</li>
          ))}
        </ul>
      )}
      <H id={`${id}-sql`}>SQL statements</H>
      {plan.statements.length === 0 ? (
        <p class="muted">No SQL statements.</p>
      ) : (
        <pre class="payload sql">
          <code>{plan.statements.map((s) => `${s};`).join('\n')}</code>
        </pre>
      )}
      {plan.destructive.length > 0 && (
        <div class="warning" role="note" aria-labelledby={`${id}-destructive`}>
          <H id={`${id}-destructive`}>Warning: {plan.destructive.length === 1 ? 'a statement destroys' : `${plan.destructive.length} statements destroy`} data</H>
          <p>Production loses what these remove; no merge or revert brings it back.</p>
          <ul>
            {plan.destructive.map((s, i) => (
              <li key={i}>
                <code>{s}</code>
              </li>
            ))}
          </ul>
        </div>
      )}
      {plan.notes.length > 0 && (
        <>
          <H id={`${id}-notes`}>Not carried over</H>
          <ul aria-labelledby={`${id}-notes`}>
            {plan.notes.map((n, i) => (
              <li key={i}>{n}</li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
