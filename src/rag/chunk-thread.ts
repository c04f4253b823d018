// Chunking off the event loop: tokenizing costs about 0.3 s per MB of text, which on the main thread would hold every
// request of the process (`npm start` runs the worker in the API's process). Small texts stay inline, where a thread's
// start would cost more than the work.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { chunkText, type Chunk, type ChunkOptions } from './chunk.ts';

/** Texts up to this many characters are chunked inline (a few milliseconds at most). */
export const INLINE_CHUNK_CHARS = 64 * 1024;

const FLAG = 'svc-rag-chunk-worker-v1';

interface ChunkJob {
  flag: typeof FLAG;
  text: string;
  opts: ChunkOptions;
}

type ChunkReply = { ok: true; chunks: Chunk[] } | { ok: false; message: string };

/** chunkText, in a worker thread for a large text. */
export function chunkTextOffThread(text: string, opts: ChunkOptions): Promise<Chunk[]> {
  if (text.length <= INLINE_CHUNK_CHARS) return Promise.resolve(chunkText(text, opts));
  return new Promise((resolve, reject) => {
    // This very module is the worker's script (see the end of the file).
    const worker = new Worker(new URL(import.meta.url), { workerData: { flag: FLAG, text, opts } satisfies ChunkJob });
    let settled = false;
    const settle = (f: () => void) => {
      if (settled) return;
      settled = true;
      void worker.terminate();
      f();
    };
    worker.once('message', (reply: ChunkReply) => settle(() => (reply.ok ? resolve(reply.chunks) : reject(new Error(reply.message)))));
    worker.once('error', (err) => settle(() => reject(err)));
    worker.once('exit', (code) => settle(() => reject(new Error(`the chunking thread stopped unexpectedly (exit code ${code})`))));
  });
}

if (!isMainThread && parentPort && (workerData as Partial<ChunkJob> | null)?.flag === FLAG) {
  const job = workerData as ChunkJob;
  let reply: ChunkReply;
  try {
    reply = { ok: true, chunks: chunkText(job.text, job.opts) };
  } catch (err) {
    reply = { ok: false, message: err instanceof Error ? err.message : String(err) };
  }
  parentPort.postMessage(reply);
}
