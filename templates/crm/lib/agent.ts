// The CRM agent (agent-chat): the prompt it answers from (the workspace's best-matching timeline documents, numbered
// for citations, the deals and contacts they and the question touch, the caller's recent conversation) and the
// reading of the AI gateway's streamed answer (OpenAI's server-sent events) into text deltas.
import type { Ctx } from './ctx.ts';
import { eq, inList, rows } from './http.ts';
import type { Hit } from './search-index.ts';

/** Earlier turns of the caller's conversation sent with the question. */
const HISTORY_TURNS = 6;
/** Open deals listed besides those the documents name: the agent is asked about the pipeline as often as notes. */
const TOP_DEALS = 5;

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

interface DealLine {
  id: string;
  title: string;
  amount: string | number;
  currency: string;
  close_date: string | null;
  next_step: string | null;
  stage_id: string;
}

/** Prompt lines for the deals and contacts the documents name, plus the biggest open deals; read as the caller. */
async function recordLines(ctx: Ctx, workspaceId: string, hits: Hit[]): Promise<string[]> {
  const dealIds = [...new Set(hits.map((h) => h.deal_id).filter((id): id is string => !!id))];
  const contactIds = [...new Set(hits.map((h) => h.contact_id).filter((id): id is string => !!id))];
  const ws = `workspace_id=${eq(workspaceId)}`;
  const [stages, named, top, contacts] = await Promise.all([
    ctx.data.from('pipeline_stages').select<{ id: string; name: string; kind: string }>('id,name,kind', { query: ws }).then((r) => rows(r, 'pipeline_stages')),
    dealIds.length ? ctx.data.from('deals').select<DealLine>('*', { query: `${ws}&id=${inList(dealIds)}` }).then((r) => rows(r, 'deals')) : Promise.resolve([]),
    ctx.data.from('deals').select<DealLine>('*', { query: `${ws}&order=amount.desc&limit=${TOP_DEALS * 2}` }).then((r) => rows(r, 'deals')),
    contactIds.length
      ? ctx.data.from('contacts').select<{ id: string; full_name: string; title: string | null; email: string | null }>('id,full_name,title,email', { query: `${ws}&id=${inList(contactIds)}` }).then((r) => rows(r, 'contacts'))
      : Promise.resolve([]),
  ]);
  const stage = new Map(stages.map((s) => [s.id, s]));
  const open = top.filter((d) => stage.get(d.stage_id)?.kind === 'open').slice(0, TOP_DEALS);
  const deals = [...new Map([...named, ...open].map((d) => [d.id, d])).values()];
  return [
    ...deals.map((d) => `Deal "${d.title}": ${stage.get(d.stage_id)?.name ?? 'unknown stage'}, ${d.amount} ${d.currency}${d.close_date ? `, closing ${d.close_date}` : ''}${d.next_step ? `, next step: ${d.next_step}` : ''}`),
    ...contacts.map((c) => `Contact ${c.full_name}${c.title ? `, ${c.title}` : ''}${c.email ? ` <${c.email}>` : ''}`),
  ];
}

/** The caller's latest turns in this workspace, oldest first. */
async function history(ctx: Ctx, workspaceId: string, userId: string): Promise<ChatMessage[]> {
  const turns = rows(
    await ctx.data.from('chat_messages').select<ChatMessage>('role,content', { query: `workspace_id=${eq(workspaceId)}&user_id=${eq(userId)}&order=created_at.desc&limit=${HISTORY_TURNS}` }),
    'chat_messages',
  );
  return turns.reverse().map(({ role, content }) => ({ role, content }));
}

/** The messages for the model: instructions, the conversation so far, then the sources and the question. */
export async function agentMessages(ctx: Ctx, workspaceId: string, userId: string, question: string, hits: Hit[]): Promise<ChatMessage[]> {
  const [records, turns] = await Promise.all([recordLines(ctx, workspaceId, hits), history(ctx, workspaceId, userId)]);
  const sources = hits.length ? hits.map((h) => `[${h.n}] (${h.kind}) ${h.snippet}`).join('\n') : '(no matching notes, e-mails or transcripts)';
  return [
    {
      role: 'system',
      content:
        "You are the assistant of a small sales team's CRM. Answer from the sources and records given with the question; " +
        'cite a source as [1], [2] right after what it supports; say so when they do not hold the answer. Be brief.',
    },
    ...turns,
    { role: 'user', content: `Sources:\n${sources}\n\nRecords:\n${records.join('\n') || '(none)'}\n\nQuestion: ${question}` },
  ];
}

/**
 * The text deltas of an OpenAI chat completion stream (`data: {json}` events, `data: [DONE]` at the end). A stream
 * that breaks after it started ends with `data: { error }` (the AI gateway's guide): thrown with its message.
 */
export async function* deltas(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    buffer += decoder.decode(value ?? new Uint8Array(), { stream: !done });
    const events = buffer.split(/\r?\n\r?\n/);
    buffer = done ? '' : (events.pop() ?? '');
    for (const event of events) {
      const data = event
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trim())
        .join('\n');
      if (!data || data === '[DONE]') continue;
      const chunk = JSON.parse(data);
      if (chunk?.error) throw new Error(String(chunk.error.message ?? 'the AI stream failed'));
      const text = chunk?.choices?.[0]?.delta?.content;
      if (typeof text === 'string' && text) yield text;
    }
    if (done) return;
  }
}

/** The source numbers an answer cites ([1], [2]), in order of first use, among those given. */
export function citedNumbers(answer: string, given: number): number[] {
  const seen = new Set<number>();
  for (const m of answer.matchAll(/\[(\d+)\]/g)) {
    const n = Number(m[1]);
    if (n >= 1 && n <= given) seen.add(n);
  }
  return [...seen];
}
