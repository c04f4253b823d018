// GET ?workspace_id: what the home page shows: the workspace, its members, how many contacts, companies and deals it
// has, the open pipeline (total and weighted by stage probability), the caller's open tasks due within a week, and
// (for owners and admins) pending invitations. Read as the caller, so row-level security applies to every count.
import { handler, json, params, uuid, rows, eq, inList } from '../lib/http.ts';
import type { Ctx } from '../lib/ctx.ts';
import { membersOf, requireMember } from '../lib/workspace.ts';

const TASK_HORIZON_DAYS = 7;

async function count(ctx: Ctx, table: string, workspaceId: string): Promise<number> {
  const result = await ctx.data.from(table).select('id', { query: `workspace_id=${eq(workspaceId)}&limit=1`, count: true });
  rows(result, table);
  return result.count ?? 0;
}

interface Stage {
  id: string;
  name: string;
  probability: number;
  kind: 'open' | 'won' | 'lost';
}

/** Open deals' total and probability-weighted total, per currency (amounts of different currencies never add up). */
async function openPipeline(ctx: Ctx, workspaceId: string) {
  const stages = rows(await ctx.data.from('pipeline_stages').select<Stage>('id,name,probability,kind', { query: `workspace_id=${eq(workspaceId)}` }), 'stages');
  const open = new Map(stages.filter((s) => s.kind === 'open').map((s) => [s.id, s]));
  if (!open.size) return { deals: 0, totals: [] };
  const deals = rows(
    await ctx.data.from('deals').select<{ amount: string | number; currency: string; stage_id: string }>('amount,currency,stage_id', {
      query: `workspace_id=${eq(workspaceId)}&stage_id=${inList([...open.keys()])}`,
    }),
    'deals',
  );
  const totals = new Map<string, { currency: string; amount: number; weighted: number }>();
  for (const d of deals) {
    const t = totals.get(d.currency) ?? { currency: d.currency, amount: 0, weighted: 0 };
    const amount = Number(d.amount);
    t.amount += amount;
    t.weighted += (amount * open.get(d.stage_id)!.probability) / 100;
    totals.set(d.currency, t);
  }
  const round = (n: number) => Math.round(n * 100) / 100;
  return { deals: deals.length, totals: [...totals.values()].map((t) => ({ ...t, amount: round(t.amount), weighted: round(t.weighted) })) };
}

export default handler(async (request, ctx) => {
  const workspaceId = uuid(params(request), 'workspace_id');
  const me = await requireMember(ctx, workspaceId);
  const horizon = new Date(Date.now() + TASK_HORIZON_DAYS * 86_400_000).toISOString();
  const [workspace, members, contacts, companies, deals, pipeline, tasks, invitations] = await Promise.all([
    ctx.data.from('workspaces').select('id,name,created_at', { query: `id=${eq(workspaceId)}` }).then((r) => rows(r, 'workspace')[0]),
    membersOf(ctx, workspaceId),
    count(ctx, 'contacts', workspaceId),
    count(ctx, 'companies', workspaceId),
    count(ctx, 'deals', workspaceId),
    openPipeline(ctx, workspaceId),
    ctx.data
      .from('tasks')
      .select('id,title,due_at,contact_id,deal_id,assignee_id', {
        query: `workspace_id=${eq(workspaceId)}&done=is.false&due_at=lte.${encodeURIComponent(horizon)}&or=(assignee_id.is.null,assignee_id.eq.${me.user_id})&order=due_at.asc&limit=20`,
      })
      .then((r) => rows(r, 'tasks')),
    me.role === 'member'
      ? Promise.resolve(null)
      : ctx.data
          .from('invitations')
          .select('id,email,role,expires_at,created_at', { query: `workspace_id=${eq(workspaceId)}&accepted_at=is.null&expires_at=gt.${encodeURIComponent(new Date().toISOString())}&order=created_at.desc` })
          .then((r) => rows(r, 'invitations')),
  ]);
  return json({
    workspace,
    role: me.role,
    members: members.map(({ user_id, email, display_name, role }) => ({ user_id, email, display_name, role })),
    counts: { contacts, companies, deals },
    open_pipeline: pipeline,
    tasks_due: tasks,
    ...(invitations ? { pending_invitations: invitations } : {}),
  });
});
