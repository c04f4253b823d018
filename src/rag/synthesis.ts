// The prompt of a synthesized RAG answer: the model may use only the numbered passages and cites them as [n].
import type { RetrievedChunk } from './types.ts';

/** The answer when no passage passed the threshold: no model call is made for it. */
export const NO_ANSWER = 'I do not know: no passage of the collection matched the question closely enough.';

export const SYNTHESIS_INSTRUCTIONS =
  'Answer the question using only the numbered sources below. Cite the sources you use as [n], e.g. [1] or [2][3]. ' +
  'If the sources do not contain the answer, say that you do not know. Do not use any other knowledge.';

export function synthesisMessages(question: string, chunks: readonly RetrievedChunk[]): { role: string; content: string }[] {
  const sources = chunks.map((c, i) => `[${i + 1}] ${c.text}`).join('\n\n');
  return [
    { role: 'system', content: SYNTHESIS_INSTRUCTIONS },
    { role: 'user', content: `Sources:\n\n${sources}\n\nQuestion: ${question}` },
  ];
}
