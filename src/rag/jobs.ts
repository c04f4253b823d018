// The RAG area's job: ingestion of one document.
import { z } from 'zod';
import { defineJob, type JobContext } from '../core/jobs.ts';
import type { RagService } from './service.ts';

/** One RAG document: extract, chunk, embed, write (src/rag/ingest.ts); safe to run twice. */
export const ragIngest = defineJob({
  name: 'rag_ingest',
  payload: z.object({ app_id: z.string(), document_id: z.string().uuid() }),
  /** Attempts before the document is marked failed. */
  maxAttempts: 5,
  handler: async ({ app_id, document_id }, { deps, attempt }: JobContext<{ rag: RagService }>) => {
    await deps.rag.process(app_id, document_id, attempt);
  },
});
