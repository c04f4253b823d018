// An app's Branches tab (issue 44). On an app: whether it is protected (agents then change it only through branches
// whose merges a person approves) with the button that sets or lifts it, its branches (each a link to its own app,
// its status, URL and expiry, deleted here), a form that makes one, and its merges. On a branch: the three-way diff
// against its parent (conflicts, changes, SQL) and the button that merges it, then the merge's progress. Copying
// branches and running merges are read again every second until they settle.
import { useEffect, useState } from 'preact/hooks';
import type { AppTabProps } from './tabs.ts';
import { ApiError, type AppDetails } from '../../api.ts';
import { appName, BRANCH_DATA, branches, branchSettled, mergeSettled, type Branch, type BranchDiff, type BranchInput, type Branches, type Merge } from '../../api/branches.ts';
import { MergePlanView } from '../../merge-plan.tsx';
import { href } from '../../router.ts';
import { useCan } from '../../session.ts';
import { Action, Field, Form, Loading, RowAction, Select, Table, text, useLoad, when, type Loaded } from '../../ui.tsx';

const POLL_MS = 1000;

/** The branch's diff against its parent, and the parent's name; null when the app is no branch. */
async function asBranch(appId: string): Promise<{ diff: BranchDiff; parent: string } | null> {
  try {
    const diff = await branches.diff(appId);
    return { diff, parent: await appName(diff.app_id) };
  } catch (err) {
    if (err instanceof ApiError && err.code === 'NOT_A_BRANCH') return null;
    throw err;
  }
}

export default function BranchesTab({ app }: AppTabProps) {
  const branch = useLoad(() => asBranch(app.app_id), [app.app_id]);
  return (
    <>
      <h2>Branches</h2>
      <Loading loaded={branch}>{(b) => (b ? <BranchOf app={app} parent={b.parent} diff={b.diff} compared={branch} /> : <Governed app={app} />)}</Loading>
    </>
  );
}

/** Reloads `loaded` every second while `busy` says something it shows is still under way. */
function usePollWhile<T>(loaded: Loaded<T>, busy: (data: T) => boolean): void {
  useEffect(() => {
    if (loaded.data === undefined || !busy(loaded.data)) return;
    const timer = setTimeout(() => void loaded.reload(), POLL_MS);
    return () => clearTimeout(timer);
  }, [loaded.data]);
}

const underWay = (b: Branches): boolean => !b.branches.every(branchSettled) || !b.merges.every(mergeSettled);

function Governed({ app }: { app: AppDetails }) {
  const appId = app.app_id;
  const state = useLoad(() => branches.list(appId), [appId]);
  usePollWhile(state, underWay);
  const canWrite = useCan('developer');
  return (
    <Loading loaded={state}>
      {(s) => (
        <>
          <Protection appId={appId} on={s.protected} canWrite={canWrite} changed={state.reload} />
          <h3>Branches of {app.name}</h3>
          <BranchList rows={s.branches} canWrite={canWrite} changed={state.reload} />
          {canWrite && <CreateForm appId={appId} created={state.reload} />}
          <h3>Merges</h3>
          <MergeList rows={s.merges} names={new Map(s.branches.map((b) => [b.app_id, b.name]))} />
        </>
      )}
    </Loading>
  );
}

function Protection({ appId, on, canWrite, changed }: { appId: string; on: boolean; canWrite: boolean; changed: () => Promise<void> }) {
  return (
    <>
      <h3>Protection</h3>
      <p id="protection-state">
        {on ? (
          <>
            <strong>Protected.</strong> Agents (platform keys, OAuth clients, MCP) cannot change this app directly: they change a branch, and a person approves its merge in Approvals.
          </>
        ) : (
          <>
            <strong>Not protected.</strong> Agents change this app directly.
          </>
        )}
      </p>
      {canWrite &&
        (on ? (
          <Action label="Lift the protection" confirm="Let agents change this app directly again?" act={() => branches.protect(appId, false).then(changed)}>
            Lift the protection
          </Action>
        ) : (
          <Action label="Protect this app" act={() => branches.protect(appId, true).then(changed)}>
            Protect this app
          </Action>
        ))}
    </>
  );
}

function BranchList({ rows, canWrite, changed }: { rows: Branch[]; canWrite: boolean; changed: () => Promise<void> }) {
  if (rows.length === 0) return <p class="muted">No branches.</p>;
  return (
    <Table caption="Branches" columns={['Name', 'Status', 'URL', 'Data', 'Expires', ...(canWrite ? ['Actions'] : [])]}>
      {rows.map((b) => (
        <tr key={b.app_id} data-branch={b.app_id}>
          <td>
            <a href={href('apps', b.app_id)}>{b.name}</a>
            <div class="muted small">{b.app_id}</div>
          </td>
          <td>
            {b.status}
            {b.merged_at && <span class="muted"> (merged {when(b.merged_at)})</span>}
            {b.error && <span class="error"> {b.error}</span>}
          </td>
          <td>
            <a href={b.url} target="_blank" rel="noopener">
              {b.url}
            </a>
          </td>
          <td>{b.data}</td>
          <td>
            <time dateTime={b.expires_at}>{when(b.expires_at)}</time>
          </td>
          {canWrite && (
            <RowAction label={`Delete branch ${b.name}`} confirm={`Delete branch ${b.name}, its database and files?`} act={() => branches.remove(b.app_id).then(changed)}>
              Delete
            </RowAction>
          )}
        </tr>
      ))}
    </Table>
  );
}

/** The branch form's tables: names separated by commas or spaces, parents first. */
const tableNames = (value: string | undefined): string[] => (value ?? '').split(/[\s,]+/).filter(Boolean);

function CreateForm({ appId, created }: { appId: string; created: () => Promise<void> }) {
  const create = async (d: FormData) => {
    const idle = text(d, 'idle_days');
    const input: BranchInput = { name: text(d, 'name'), data: (text(d, 'data') ?? 'none') as BranchInput['data'], tables: tableNames(text(d, 'tables')), idle_days: idle ? Number(idle) : undefined };
    await branches.create(appId, input);
    await created();
  };
  return (
    <Form label="Create a branch" button="Create branch" submit={create}>
      <p class="muted">A branch is an app of its own with this app's schema, functions and site. Rows: none, or a seed of the tables named (rows no end user owns).</p>
      <div class="row">
        <Field label="Branch name (optional)" name="name" maxLength={100} />
        <Select label="Data" name="data" options={BRANCH_DATA} initial="none" />
        <Field label="Tables (seed, parents first, comma-separated)" name="tables" />
        <Field label="Idle days before deletion (optional)" name="idle_days" type="number" min={1} max={365} />
      </div>
    </Form>
  );
}

/** `names`: the branches' names by app_id (a deleted branch's merge names none). */
function MergeList({ rows, names }: { rows: Merge[]; names: ReadonlyMap<string, string> }) {
  if (rows.length === 0) return <p class="muted">No merges.</p>;
  return (
    <Table caption="Merges" columns={['Created', 'Branch', 'Status', 'Changes', 'Error']}>
      {rows.map((m) => (
        <tr key={m.merge_id} data-merge={m.merge_id}>
          <td>
            <time dateTime={m.created_at}>{when(m.created_at)}</time>
          </td>
          <td>{m.branch_app_id ? <a href={href('apps', m.branch_app_id)}>{names.get(m.branch_app_id) ?? m.branch_app_id}</a> : <span class="muted">deleted</span>}</td>
          <td>
            <MergeStatus merge={m} />
          </td>
          <td class="clip">
            <ul class="statements">
              {m.changes.map((c, i) => (
                <li key={i}>{c}</li>
              ))}
            </ul>
          </td>
          <td>{m.error ? <span class="error">{m.error}</span> : <span class="muted">—</span>}</td>
        </tr>
      ))}
    </Table>
  );
}

/** A merge's status; one waiting for a person links to the Approvals page, where it is approved. */
function MergeStatus({ merge: m }: { merge: Merge }) {
  if (m.status !== 'proposed') return <>{m.status}</>;
  return (
    <>
      proposed: <a href={href('approvals')}>waits for approval</a>
    </>
  );
}

/** A branch's page: what a merge into the parent carries over, conflicts that block it, and the merge itself. */
function BranchOf({ app, parent, diff, compared }: { app: AppDetails; parent: string; diff: BranchDiff; compared: Loaded<unknown> }) {
  const canWrite = useCan('developer');
  const [merge, setMerge] = useState<Merge>();
  // A refused merge (409: conflicts, nothing to merge) shows its reason by the button and the diff as it is now.
  const act = async () => {
    try {
      setMerge(await branches.merge(app.app_id));
    } finally {
      await compared.reload();
    }
  };
  return (
    <>
      <p>
        This app is a branch of <a href={href('apps', diff.app_id, 'branches')}>{parent}</a>.
      </p>
      <h3>Compared with {parent}</h3>
      <Conflicts diff={diff} />
      <MergePlanView plan={{ ...diff, changes: diff.changes.map((c) => c.summary) }} level={4} id="branch-diff" />
      {canWrite && (
        <div class="row">
          <Action label={`Merge into ${parent}`} confirm={`Merge this branch into ${parent}?`} act={act}>
            Merge into {parent}
          </Action>
        </div>
      )}
      {merge && <MergeProgress key={merge.merge_id} first={merge} />}
    </>
  );
}

function Conflicts({ diff }: { diff: BranchDiff }) {
  if (diff.conflicts.length === 0) return null;
  return (
    <div class="warning" role="note" aria-labelledby="branch-conflicts">
      <h4 id="branch-conflicts">Conflicts: nothing merges until they are resolved</h4>
      <p>Both the branch and production changed these since the branch was made. Make the branch agree with production, or branch again and redo the change.</p>
      <ul>
        {diff.conflicts.map((c) => (
          <li key={c.unit}>
            {c.summary}
            <div class="muted small">
              branch: <code>{JSON.stringify(c.branch)}</code>; production: <code>{JSON.stringify(c.production)}</code>
            </div>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The merge just asked for, read from the parent's list every second until it settles (a proposal waits for a person). */
function MergeProgress({ first }: { first: Merge }) {
  const latest = useLoad(async () => (await branches.list(first.app_id)).merges.find((m) => m.merge_id === first.merge_id) ?? first, [first.merge_id]);
  usePollWhile(latest, (m) => !mergeSettled(m));
  const m = latest.data ?? first;
  return (
    <p role="status" aria-label="Merge progress">
      Merge <code>{m.merge_id.slice(0, 8)}</code>: <strong>{m.status}</strong>
      {m.status === 'proposed' && (
        <>
          {' '}
          — a person approves it on the <a href={href('approvals')}>Approvals</a> page.
        </>
      )}
      {m.error && <span class="error"> {m.error}</span>}
      {latest.error && <span role="alert" class="error"> {latest.error}</span>}
    </p>
  );
}
