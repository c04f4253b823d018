// The agent chat: past messages through the data API, the answer streamed by agent-chat as server-sent events.
import type { Citation } from '../types.ts';
import { db, fnStream, rows, type SseEvent } from './core.ts';
import { ApiError } from './errors.ts';

export interface ChatMessage {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  citations: Citation[] | null;
  created_at: string;
}

export async function history(workspaceId: string, userId: string): Promise<ChatMessage[]> {
  const q = (await db()).from('chat_messages').select('id,role,content,citations,created_at').eq('workspace_id', workspaceId).eq('user_id', userId);
  return rows<ChatMessage>(await q.order('created_at').limit(200));
}

export interface ChatHandlers {
  token(text: string): void;
  citations(list: Citation[]): void;
}

/** Asks the agent; tokens and citations are handed on as they arrive. Tolerates OpenAI-shaped chunks too. */
export async function ask(workspaceId: string, message: string, on: ChatHandlers, signal?: AbortSignal): Promise<void> {
  await fnStream('agent-chat', { body: { workspace_id: workspaceId, message }, signal }, (e) => handle(e, on));
}

function handle({ event, data }: SseEvent, on: ChatHandlers): void {
  if (data === '[DONE]') return;
  let d: Record<string, any>;
  try {
    d = JSON.parse(data);
  } catch {
    if (event === 'token' || event === 'message') on.token(data);
    return;
  }
  if (event === 'error' || d.error) {
    const e = typeof d.error === 'object' && d.error ? d.error : d;
    throw new ApiError(502, String(e.code ?? 'agent_error'), String(e.message ?? 'The agent failed.'));
  }
  const text = d.token ?? d.delta ?? d.text ?? d.content ?? d.choices?.[0]?.delta?.content;
  if (typeof text === 'string' && event !== 'citations' && event !== 'done') on.token(text);
  const cited = Array.isArray(d) ? d : d.citations ?? d.sources;
  if (Array.isArray(cited)) on.citations(cited as Citation[]);
}
