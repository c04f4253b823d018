// The ledger: every action proposed to the person's substrate, newest first, a page at a time (next_before), filtered by
// status, capability, source app and rule (#/substrate/ledger/rule/<rule_id> opens it filtered by that rule). An
// executed action the API calls revertible is reverted through the one door (revert_action proposed), and the
// outcome is shown.
import { useState } from 'preact/hooks';
import { ledger, type LedgerAction, type LedgerFilters, type Proposal } from '../../api/substrate.ts';
import type { TabProps } from '../../tabs.tsx';
import { Action, Field, Loading, Select, Table, text, when } from '../../ui.tsx';
import { Payload } from '../../json.tsx';
import { Filters, Pager, proposerOf, useCursorPages } from './parts.tsx';

const PAGE = 25;
const STATUSES = ['all', 'proposed', 'executed', 'rejected'] as const;

export default function Ledger({ rest }: TabProps) {
  const [filters, setFilters] = useState<LedgerFilters>(() => (rest[0] === 'rule' && rest[1] ? { source_rule_id: rest[1] } : {}));
  const [outcome, setOutcome] = useState('');
  const apply = (data: FormData) =>
    setFilters({
      status: data.get('status') === 'all' ? undefined : (data.get('status') as string),
      capability: text(data, 'capability'),
      source_app_id: text(data, 'source_app_id'),
      source_rule_id: text(data, 'source_rule_id'),
    });
  return (
    <section aria-labelledby="ledger-title">
      <h2 id="ledger-title">Ledger</h2>
      <p class="muted">Every action proposed to your substrate, by you, your agents, your apps and your rules.</p>
      <Filters label="Filter the ledger" apply={apply}>
        <Select label="Status" name="status" options={STATUSES} initial={filters.status ?? 'all'} />
        <Field label="Capability" name="capability" defaultValue={filters.capability} placeholder="record_decision" />
        <Field label="Source app" name="source_app_id" defaultValue={filters.source_app_id} />
        <Field label="Rule" name="source_rule_id" defaultValue={filters.source_rule_id} placeholder="rul_…" />
      </Filters>
      <p role="status" class="notice">
        {outcome}
      </p>
      <LedgerPages key={JSON.stringify(filters)} filters={filters} reverted={setOutcome} />
    </section>
  );
}

function LedgerPages({ filters, reverted }: { filters: LedgerFilters; reverted: (outcome: string) => void }) {
  const pages = useCursorPages((before) => ledger.list(filters, before, PAGE));
  const revert = async (a: LedgerAction) => {
    reverted(describeRevert(a, await ledger.revert(a.action_id)));
    await pages.loaded.reload();
  };
  return (
    <Loading loaded={pages.loaded}>
      {(page) =>
        page.rows.length === 0 ? (
          <p class="muted">No actions match.</p>
        ) : (
          <>
            <Table caption="Ledger" columns={['Capability', 'Status', 'Proposed by', 'Created', 'Decided', 'Payload', '']}>
              {page.rows.map((a) => (
                <Row key={a.action_id} action={a} revert={() => revert(a)} />
              ))}
            </Table>
            <Pager pages={pages} label="Ledger" />
          </>
        )
      }
    </Loading>
  );
}

function Row({ action: a, revert }: { action: LedgerAction; revert: () => Promise<void> }) {
  return (
    <tr data-action={a.action_id}>
      <td>
        <code>{a.capability}</code>
        <div class="muted small">{a.action_id}</div>
      </td>
      <td>
        {a.status}
        {a.reverted_by && <div class="muted small">reverted by {a.reverted_by}</div>}
        {a.reject_reason && <div class="muted small">{a.reject_reason}</div>}
      </td>
      <td>{proposerOf(a)}</td>
      <td>
        <time dateTime={a.created_at}>{when(a.created_at)}</time>
      </td>
      <td>{a.decided_at ? <time dateTime={a.decided_at}>{when(a.decided_at)}</time> : '—'}</td>
      <td>
        <Payload action={a} />
      </td>
      <td>
        {a.revertible && (
          <Action label={`Revert ${a.action_id}`} confirm={`Revert ${a.capability} ${a.action_id}?`} act={revert}>
            Revert
          </Action>
        )}
      </td>
    </tr>
  );
}

/** The revert proposal's outcome in words: done at once, waiting for approval, or refused by a principle. */
function describeRevert(target: LedgerAction, p: Proposal): string {
  if (p.verdict.result === 'rejected') return `Reverting ${target.action_id} was refused: ${p.verdict.reason}.`;
  if (p.requires_approval) return `Reverting ${target.action_id} waits for your approval (${p.action_id}, see Approvals).`;
  return `Reverted ${target.capability} ${target.action_id} (revert action ${p.action_id}).`;
}
