// The approvals inbox: the workspace's proposals with the substrate's verdict, decided by an owner or admin, kept
// live by the substrate's change stream (a ticket from stream-ticket, then a websocket on the platform).
import type { Proposal } from '../types.ts';
import { platformUrl } from '../env.ts';
import { fn } from './core.ts';

export interface Approval extends Partial<Proposal> {
  id: string;
  summary: string;
  /** The substrate action behind the proposal: its status and the policy's verdict. */
  action?: { status?: string; verdict?: { result?: string; reason?: string } | null; decided_via?: string | null } | null;
}

/** The policy's verdict in words, e.g. "requires approval: conflicts with 1 principle(s)". */
export function verdictText(a: Approval): string | null {
  const v = a.action?.verdict;
  if (!v?.result) return null;
  return [v.result.replaceAll('_', ' '), v.reason].filter(Boolean).join(': ');
}

export async function approvals(workspaceId: string, status: string): Promise<Approval[]> {
  const answer = await fn<Approval[] | { approvals?: Approval[]; proposals?: Approval[] }>('approvals', { method: 'GET', query: { workspace_id: workspaceId, status } });
  return Array.isArray(answer) ? answer : answer.approvals ?? answer.proposals ?? [];
}

export const decide = (proposalId: string, decision: 'approve' | 'reject', reason?: string) =>
  fn('approval-decide', { body: { proposal_id: proposalId, decision, ...(reason ? { reason } : {}) } });

/**
 * A frame says the substrate's ledger changed; the CRM's own proposals row is written by the same function call just
 * after (propose, then insert), so the inbox is read again once things settle, and once more later.
 */
const SETTLE_MS = [400, 2_500];
const RECONNECT_MS = 2_000;
const RECONNECT_MAX_MS = 60_000;

/**
 * Calls `changed` after each burst of change frames of the substrate's stream (and on reconnecting, since frames may have been
 * missed meanwhile) until the returned function is called; a lost socket reconnects with a new ticket.
 */
export function live(workspaceId: string, changed: () => void, status: (connected: boolean) => void): () => void {
  let socket: WebSocket | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  let wait = RECONNECT_MS;
  let settling: Array<ReturnType<typeof setTimeout>> = [];
  const frame = () => {
    settling.forEach(clearTimeout);
    settling = SETTLE_MS.map((ms) => setTimeout(changed, ms));
  };
  const open = async () => {
    try {
      const t = await fn<{ ticket: string; url?: string }>('stream-ticket', { body: { workspace_id: workspaceId } });
      if (stopped) return;
      const url = t.url ?? `${platformUrl.replace(/^http/, 'ws')}/v1/me/substrate/stream?ticket=${encodeURIComponent(t.ticket)}`;
      socket = new WebSocket(url);
      socket.onopen = () => {
        wait = RECONNECT_MS;
        status(true);
      };
      socket.onmessage = (m) => {
        if ((JSON.parse(String(m.data)) as { type?: string }).type !== 'hello') frame();
      };
      socket.onclose = () => retry();
    } catch {
      retry();
    }
  };
  const retry = () => {
    status(false);
    if (stopped) return;
    // Backing off: a stream that cannot be reached (no substrate link yet) must not turn into a request loop.
    timer = setTimeout(() => void open().then(changed), wait);
    wait = Math.min(wait * 2, RECONNECT_MAX_MS);
  };
  void open();
  return () => {
    stopped = true;
    clearTimeout(timer);
    settling.forEach(clearTimeout);
    socket?.close();
  };
}
