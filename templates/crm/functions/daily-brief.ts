// Daily at 07:00 UTC: for each workspace, a brief the AI gateway writes from what the day holds (open tasks due by
// tonight, deals whose stage changed in the last day, today's meetings), saved on the timeline as a 'system' entry with
// subject 'Daily brief' (one per workspace and day: external_id daily-brief:<date>, so a re-run replaces it). A
// workspace with nothing due, moved or scheduled gets no brief.
import { eachLogged } from '../lib/batch.ts';
import type { Ctx } from '../lib/ctx.ts';
import { HttpError, eq, handler, json, rows } from '../lib/http.ts';
import { allWorkspaces } from '../lib/workspace.ts';

const DAY_MS = 86_400_000;
const ITEMS = 20;

interface Day {
  date: string;
  start: string;
  end: string;
  since: string;
}

const q = (iso: string) => encodeURIComponent(iso);

/** The brief's material for one workspace, as prompt lines per heading (empty when there is nothing). */
async function material(ctx: Ctx, workspaceId: string, day: Day): Promise<string[]> {
  const ws = `workspace_id=${eq(workspaceId)}`;
  const db = ctx.asApp.data;
  const [tasks, moves, meetings] = await Promise.all([
    db.from('tasks').select<{ title: string; due_at: string }>('title,due_at', { query: `${ws}&done=is.false&due_at=lt.${q(day.end)}&order=due_at&limit=${ITEMS}` }).then((r) => rows(r, 'tasks')),
    db
      .from('activities')
      .select<{ subject: string | null; body: string }>('subject,body', { query: `${ws}&kind=eq.stage_change&occurred_at=gte.${q(day.since)}&order=occurred_at&limit=${ITEMS}` })
      .then((r) => rows(r, 'activities')),
    db
      .from('meetings')
      .select<{ title: string; starts_at: string }>('title,starts_at', { query: `${ws}&starts_at=gte.${q(day.start)}&starts_at=lt.${q(day.end)}&order=starts_at&limit=${ITEMS}` })
      .then((r) => rows(r, 'meetings')),
  ]);
  const section = (title: string, lines: string[]) => (lines.length ? [`${title}:`, ...lines.map((l) => `- ${l}`)] : []);
  return [
    ...section('Tasks due', tasks.map((t) => `${t.title} (due ${t.due_at.slice(0, 16).replace('T', ' ')} UTC${t.due_at < day.start ? ', overdue' : ''})`)),
    ...section('Deals moved in the last day', moves.map((m) => m.body || m.subject || 'a stage change')),
    ...section("Today's meetings", meetings.map((m) => `${m.starts_at.slice(11, 16)} UTC ${m.title}`)),
  ];
}

async function brief(ctx: Ctx, workspace: { id: string; name: string }, day: Day): Promise<boolean> {
  const lines = await material(ctx, workspace.id, day);
  if (!lines.length) return false;
  const answer = await ctx.asApp.ai.chat({
    model: ctx.env.AI_MODEL ?? 'gpt-4o-mini',
    messages: [
      { role: 'system', content: "You write a sales team's morning brief from its CRM: a few short lines on what matters today, most urgent first. No greeting." },
      { role: 'user', content: `Workspace: ${workspace.name}\nDate: ${day.date}\n\n${lines.join('\n')}` },
    ],
  });
  const text = String(answer?.choices?.[0]?.message?.content ?? '').trim();
  if (!text) throw new HttpError(502, 'empty_answer', 'The AI gateway answered without a brief.');
  const entry = { workspace_id: workspace.id, kind: 'system', subject: 'Daily brief', body: text, external_id: `daily-brief:${day.date}`, occurred_at: new Date().toISOString() };
  rows(await ctx.asApp.data.from('activities').insert(entry, { query: 'on_conflict=workspace_id,external_id', prefer: 'resolution=merge-duplicates,return=representation' }), 'activities');
  return true;
}

export default handler(async (request, ctx) => {
  // The scheduled slot names the day (a late or repeated run still briefs the day it was for).
  const scheduled = Date.parse(String(((await request.json().catch(() => ({}))) as { scheduled_at?: unknown }).scheduled_at ?? ''));
  const now = Number.isNaN(scheduled) ? Date.now() : scheduled;
  const date = new Date(now).toISOString().slice(0, 10);
  const start = `${date}T00:00:00.000Z`;
  const day: Day = { date, start, end: new Date(Date.parse(start) + DAY_MS).toISOString(), since: new Date(now - DAY_MS).toISOString() };
  let briefed = 0;
  const workspaces = await allWorkspaces(ctx);
  const { failed } = await eachLogged(workspaces, (w) => `brief of workspace ${w.id}`, async (w) => void ((await brief(ctx, w, day)) && briefed++));
  return json({ date, workspaces: workspaces.length, briefed, failed });
});
