// One answer from the AI gateway, as the app (its owner's credits; end users never call the model directly), with the
// model the owner set in AI_MODEL (the gateway names models '<vendor>/<model>').
import type { Ctx } from './ctx.ts';
import { HttpError } from './http.ts';

export const DEFAULT_MODEL = 'openai/gpt-4o-mini';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** The answer's text; 502 when the gateway answered with none. */
export async function chatText(ctx: Ctx, messages: ChatMessage[], what: string): Promise<string> {
  const answer = await ctx.asApp.ai.chat({ model: ctx.env.AI_MODEL || DEFAULT_MODEL, messages });
  const content = String(answer?.choices?.[0]?.message?.content ?? '').trim();
  if (!content) throw new HttpError(502, 'empty_answer', `The AI gateway answered without ${what}.`);
  return content;
}
