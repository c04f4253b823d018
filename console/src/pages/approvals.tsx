// Approvals: the signed-in person's pending substrate proposals (GET /v1/me/substrate/actions?status=proposed), each
// with its capability, payload, proposer, the verdict's reason and the principles in conflict; Approve, or Reject
// with a reason. Kept live by the substrate change stream: a ticket minted with the session (POST
// /v1/me/substrate/ws-ticket) opens the websocket on the console's own origin, every frame re-reads the list
// (debounced), and a closed socket reconnects with a new ticket after a growing pause. New proposals are announced in
// a live region. Every role decides: the substrate is the person's own, whatever their role in the account. A
// branch's merge (merge_branch) shows its plan, the diff the person approves: changes, SQL, destructive statements.
import { useEffect, useRef, useState } from 'preact/hooks';
import { substrate, type SubstrateAction } from '../api.ts';
import { appName, type MergePlan } from '../api/branches.ts';
import { Action, Field, Form, Loading, text, useLoad, when } from '../ui.tsx';
import { Facts, type Fact } from '../facts.tsx';
import { Payload, payloadOmitted } from '../json.tsx';
import { MergePlanView } from '../merge-plan.tsx';
import { href } from '../router.ts';

/** Frames arriving together (a merge touches several rows) cause one re-read. */
const DEBOUNCE_MS = 150;
const BACKOFF_FIRST_MS = 1_000;
const BACKOFF_MAX_MS = 30_000;

type LiveState = 'connecting' | 'live' | 'reconnecting';

/**
 * The substrate change stream of the person's account, calling `changed` (debounced) on every frame and when a socket
 * opens (frames missed while it was closed are not replayed). Reconnects with a fresh ticket, backing off to 30 s.
 */
function useSubstrateStream(changed: () => void): LiveState {
  const [state, setState] = useState<LiveState>('connecting');
  const onChange = useRef(changed);
  onChange.current = changed;
  useEffect(() => {
    let stopped = false;
    let socket: WebSocket | undefined;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let debounce: ReturnType<typeof setTimeout> | undefined;
    let backoff = BACKOFF_FIRST_MS;
    const soon = () => {
      clearTimeout(debounce);
      debounce = setTimeout(() => onChange.current(), DEBOUNCE_MS);
    };
    const again = () => {
      if (stopped) return;
      setState('reconnecting');
      retry = setTimeout(() => void connect(), backoff);
      backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
    };
    const connect = async () => {
      let ticket: string;
      try {
        ticket = (await substrate.ticket()).ticket;
      } catch {
        return again();
      }
      if (stopped) return;
      const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/v1/me/substrate/stream?ticket=${encodeURIComponent(ticket)}`);
      socket = ws;
      ws.onopen = () => {
        backoff = BACKOFF_FIRST_MS;
        setState('live');
        soon();
      };
      ws.onmessage = soon;
      ws.onclose = () => {
        if (socket === ws) socket = undefined;
        again();
      };
    };
    void connect();
    return () => {
      stopped = true;
      clearTimeout(retry);
      clearTimeout(debounce);
      socket?.close();
    };
  }, []);
  return state;
}

const LIVE_TEXT: Record<LiveState, string> = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…' };

export function ApprovalsPage() {
  const list = useLoad(substrate.pending, []);
  const live = useSubstrateStream(() => void list.reload());
  // Every person decides what is proposed to their own substrate, whatever their role in the account (as the API allows).
  // Proposals seen so far: one that appears later is announced (the first load is not news).
  const known = useRef<Set<string> | undefined>(undefined);
  const [news, setNews] = useState('');
  useEffect(() => {
    if (!list.data) return;
    const ids = list.data.map((a) => a.action_id);
    if (known.current) {
      const fresh = list.data.filter((a) => !known.current!.has(a.action_id));
      if (fresh.length) setNews(`${fresh.length} new ${fresh.length === 1 ? 'proposal' : 'proposals'}: ${fresh.map((a) => a.capability).join(', ')}.`);
    }
    known.current = new Set(ids);
  }, [list.data]);
  return (
    <section aria-labelledby="approvals-title">
      <h1 id="approvals-title" tabIndex={-1}>
        Approvals
      </h1>
      <p class="live-line">
        <span class="live" data-state={live}>
          {LIVE_TEXT[live]}
        </span>
        <span class="muted"> What agents, apps and rules propose to your substrate and wait for your decision.</span>
      </p>
      <p role="status" aria-live="polite" class="visually-hidden" id="approvals-news">
        {news}
      </p>
      <Loading loaded={list}>
        {(actions) =>
          actions.length === 0 ? (
            <p class="muted">No proposals wait for a decision.</p>
          ) : (
            <ul class="proposals" aria-label="Pending proposals">
              {actions.map((a) => (
                <Proposal key={a.action_id} action={a} decided={list.reload} />
              ))}
            </ul>
          )
        }
      </Loading>
    </section>
  );
}

function proposer(a: SubstrateAction): string {
  const who = a.proposer_kind === 'agent' ? 'an agent' : 'a person';
  if (a.source_rule_id) return `rule ${a.source_rule_id} (${who})`;
  if (a.source_app_id) return `app ${a.source_app_id} (${who})`;
  return who;
}

function proposalFacts(a: SubstrateAction): Fact[] {
  const facts: Fact[] = [
    ['Proposed by', proposer(a)],
    ['Proposed', <time dateTime={a.created_at}>{when(a.created_at)}</time>],
    ['Why it waits', a.verdict.reason],
  ];
  if (a.verdict.conflicts.length === 0) return facts;
  const conflicts = (
    <ul aria-label={`Principles in conflict with ${a.action_id}`}>
      {a.verdict.conflicts.map((c) => (
        <li key={c.principle_id}>
          {c.title} <span class="muted">({c.mode === 'reject' ? 'rejects' : 'requires approval'})</span>
        </li>
      ))}
    </ul>
  );
  return [...facts, ['Principles in conflict', conflicts]];
}

function Proposal({ action: a, decided }: { action: SubstrateAction; decided: () => Promise<void> }) {
  const title = `${a.action_id}-title`;
  return (
    <li class="proposal" aria-labelledby={title}>
      <h2 id={title}>
        <code>{a.capability}</code> <span class="muted">{a.action_id}</span>
      </h2>
      <Facts facts={proposalFacts(a)} />
      {a.capability === 'merge_branch' ? <MergeProposal action={a} /> : <Payload action={a} />}
      <div class="row decide">
        <Action label={`Approve ${a.action_id}`} act={async () => (await substrate.approve(a.action_id), await decided())}>
          Approve
        </Action>
        <Form inline label={`Reject ${a.action_id}`} button="Reject" submit={async (data) => (await substrate.reject(a.action_id, text(data, 'reason')), await decided())}>
          <Field label="Reason for rejecting (optional)" name="reason" maxLength={2000} />
        </Form>
      </div>
    </li>
  );
}

/** merge_branch's payload (src/substrate/capabilities/merge-branch.ts). */
interface MergeBranchPayload extends MergePlan {
  merge_id: string;
  app_id: string;
  branch_app_id: string;
  /** What the merge deploys, as it deploys it (proposals made before the code was shown lack them). */
  functions?: Array<{ name: string; code: string; sha256: string }>;
  deleted_functions?: string[];
  site_digest?: string | null;
  ai?: Record<string, unknown> | null;
}

interface MergeShown {
  payload: MergeBranchPayload;
  app: string;
  branch: string;
}

/** The whole payload (read again when the list left a large plan out) and the names of the app and the branch. */
async function readMerge(a: SubstrateAction): Promise<MergeShown> {
  const payload = (payloadOmitted(a) ? (await substrate.get(a.action_id)).payload : a.payload) as MergeBranchPayload;
  const [app, branch] = await Promise.all([appName(payload.app_id), appName(payload.branch_app_id)]);
  return { payload, app, branch };
}

/** A branch's merge into a protected app: what approving it applies to production, shown open. */
/** The code, site and settings the merge applies: the person reads what runs, not only its name. */
function MergeContent({ payload: p, id }: { payload: MergeBranchPayload; id: string }) {
  const functions = p.functions ?? [];
  return (
    <>
      {functions.length > 0 && (
        <>
          <h4 id={`${id}-code`}>Function code</h4>
          {functions.map((f) => (
            <details key={f.name}>
              <summary>
                <code>{f.name}</code> (SHA-256 <code>{f.sha256.slice(0, 12)}</code>)
              </summary>
              <pre class="payload">
                <code>{f.code}</code>
              </pre>
            </details>
          ))}
        </>
      )}
      {p.deleted_functions && p.deleted_functions.length > 0 && <p>Functions deleted: {p.deleted_functions.join(', ')}.</p>}
      {p.site_digest && (
        <p>
          The site becomes the branch's, content digest <code>{p.site_digest.slice(0, 12)}</code>.
        </p>
      )}
      {p.ai && (
        <>
          <h4 id={`${id}-ai`}>AI settings</h4>
          <pre class="payload">
            <code>{JSON.stringify(p.ai, null, 2)}</code>
          </pre>
        </>
      )}
    </>
  );
}

function MergeProposal({ action: a }: { action: SubstrateAction }) {
  const shown = useLoad(() => readMerge(a), [a.action_id]);
  const title = `${a.action_id}-merge`;
  return (
    <Loading loaded={shown}>
      {({ payload: p, app, branch }) => (
        <section aria-labelledby={title}>
          <h3 id={title}>
            Merge branch <a href={href('apps', p.branch_app_id, 'branches')}>{branch}</a> into <a href={href('apps', p.app_id, 'branches')}>{app}</a>
          </h3>
          <p class="muted small">
            Merge <code>{p.merge_id}</code> of <code>{p.branch_app_id}</code> into <code>{p.app_id}</code>: approving applies it to production in one job.
          </p>
          <MergePlanView plan={p} level={4} id={title} />
          <MergeContent payload={p} id={title} />
        </section>
      )}
    </Loading>
  );
}
