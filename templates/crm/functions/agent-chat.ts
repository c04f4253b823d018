// POST {workspace_id, message}: the CRM agent's answer, streamed to the browser as server-sent events:
//   event: citations  data: [{ n, kind, activity_id | meeting_id, contact_id?, deal_id?, snippet }]   (first)
//   event: token      data: { text }                                                                    (each delta)
//   event: done       data: { message_id, cited: [n, ...] }   or   event: error  data: { message }      (last)
// Context comes from the workspace's documents (RAG as the app, filtered by workspace) and its rows (as the caller).
// The model is called through the AI gateway with the caller's own token, so the answer is metered to them and their
// daily budget applies; both turns are kept in chat_messages (written by the app: end users only read it).
import { agentMessages, citedNumbers, deltas } from '../lib/agent.ts';
import { HttpError, body, fail, handler, one, rows, text, uuid } from '../lib/http.ts';
import { searchWorkspace } from '../lib/search-index.ts';
import { requireMember } from '../lib/workspace.ts';

const SOURCES = 6;
const encoder = new TextEncoder();

/** The gateway's refusal before any token (OpenAI's { error: { message, code } }), as the CRM's error answer. */
async function upstreamFailure(res: Response): Promise<Response> {
  const parsed = await res.json().catch(() => null);
  const status = [402, 403, 429].includes(res.status) ? res.status : 502;
  return fail(status, String(parsed?.error?.code ?? 'ai_error'), String(parsed?.error?.message ?? `The AI gateway answered ${res.status}.`));
}

export default handler(async (request, ctx) => {
  const input = await body(request);
  const workspaceId = uuid(input, 'workspace_id');
  const message = text(input, 'message', { max: 4000 });
  const member = await requireMember(ctx, workspaceId);
  const hits = await searchWorkspace(ctx, workspaceId, message, SOURCES);
  const messages = await agentMessages(ctx, workspaceId, member.user_id, message, hits);
  const citations = hits.map(({ document_id: _document, score: _score, ...citation }) => citation);

  const upstream = await fetch(`${ctx.env.SVC_API_URL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ctx.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: ctx.env.AI_MODEL ?? 'gpt-4o-mini', stream: true, messages }),
  });
  if (!upstream.ok || !upstream.body) return upstreamFailure(upstream);
  // The question is kept once the model took it, so a refused call leaves no unanswered turn behind.
  rows(await ctx.asApp.data.from('chat_messages').insert({ workspace_id: workspaceId, user_id: member.user_id, role: 'user', content: message }), 'chat_messages');

  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      const send = (event: string, data: unknown) => controller.enqueue(encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`));
      send('citations', citations);
      let answer = '';
      try {
        for await (const delta of deltas(upstream.body!)) {
          answer += delta;
          send('token', { text: delta });
        }
        if (!answer.trim()) throw new HttpError(502, 'empty_answer', 'The AI gateway streamed no answer.');
        const cited = citedNumbers(answer, citations.length);
        const saved = one(
          await ctx.asApp.data.from('chat_messages').insert<{ id: string }>({
            workspace_id: workspaceId,
            user_id: member.user_id,
            role: 'assistant',
            content: answer,
            citations: citations.filter((c) => cited.includes(c.n)),
          }),
          'chat message',
        );
        send('done', { message_id: saved.id, cited });
      } catch (err) {
        send('error', { message: err instanceof Error ? err.message : String(err) });
      }
      controller.close();
    },
  });
  return new Response(stream, { headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' } });
});
