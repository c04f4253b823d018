// Proposals waiting for a person (deal moves, next steps, forecasts, campaign launches), refreshed live by the
// substrate's change stream; owners and admins approve or reject them.
import { useEffect, useState } from 'preact/hooks';
import { approvals, decide, live, verdictText, type Approval } from '../api/approvals.ts';
import { canManage, useCurrent } from '../context.ts';
import { Action, Choice, Page, Show, useLoad, when } from '../ui.tsx';

const KIND: Record<string, string> = { stage_change: 'Deal stage', next_step: 'Next step', forecast: 'Forecast', campaign_launch: 'Campaign launch' };

export function Approvals() {
  const { workspace } = useCurrent();
  const [status, setStatus] = useState('pending');
  const [connected, setConnected] = useState(false);
  const loaded = useLoad(() => approvals(workspace.id, status), [workspace.id, status]);
  const { reload } = loaded;
  useEffect(() => live(workspace.id, () => void reload(), setConnected), [workspace.id, reload]);
  const manager = canManage(workspace);
  return (
    <Page
      title="Approvals"
      actions={
        <>
          <span class={`live ${connected ? 'on' : 'off'}`} role="status">
            {connected ? 'Live' : 'Connecting…'}
          </span>
          <Choice
            label="Show"
            name="status"
            value={status}
            onChange={(e) => setStatus(e.currentTarget.value)}
            options={[
              ['pending', 'Pending'],
              ['approved', 'Approved'],
              ['applied', 'Applied'],
              ['rejected', 'Rejected'],
            ]}
          />
        </>
      }
    >
      {!manager && <p class="muted">Owners and admins decide; you see what waits.</p>}
      <Show loaded={loaded}>
        {(list) =>
          list.length ? (
            <ul class="list approvals">
              {list.map((a) => (
                <ApprovalItem key={a.id} item={a} manager={manager} onDecided={reload} />
              ))}
            </ul>
          ) : (
            <p class="muted">Nothing {status}.</p>
          )
        }
      </Show>
    </Page>
  );
}

function ApprovalItem({ item, manager, onDecided }: { item: Approval; manager: boolean; onDecided: () => Promise<void> }) {
  const decideAs = (decision: 'approve' | 'reject') => async () => {
    const reason = decision === 'reject' ? (prompt('Why reject it? (optional)') ?? undefined) : undefined;
    await decide(item.id, decision, reason || undefined);
    await onDecided();
  };
  return (
    <li>
      <p>
        <span class="badge">{KIND[item.kind ?? ''] ?? item.kind ?? 'Proposal'}</span> <strong>{item.summary}</strong>
      </p>
      <p class="muted">
        {when(item.created_at)}
        {verdictText(item) && ` · ${verdictText(item)}`}
        {item.status && item.status !== 'pending' && ` · ${item.status}`}
        {item.reason && ` · ${item.reason}`}
      </p>
      {manager && (item.status ?? 'pending') === 'pending' && (
        <div class="row-actions">
          <Action class="primary" label={`Approve: ${item.summary}`} done="Approved." onAction={decideAs('approve')}>
            Approve
          </Action>
          <Action label={`Reject: ${item.summary}`} done="Rejected." onAction={decideAs('reject')}>
            Reject
          </Action>
        </div>
      )}
    </li>
  );
}
