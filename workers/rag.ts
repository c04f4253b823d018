import type { Task } from 'graphile-worker';
import { z } from 'zod';
import type { WorkerServices } from './index.ts';

const Payload = z.object({ app_id: z.string(), document_id: z.string().uuid() });

/** One RAG document: extract, chunk, embed, write (src/rag/ingest.ts); safe to run twice. */
export function ragIngest(s: WorkerServices): Task {
  return async (payload, helpers) => {
    const { app_id, document_id } = Payload.parse(payload);
    await s.rag.process(app_id, document_id, { number: helpers.job.attempts, max: helpers.job.max_attempts });
  };
}
