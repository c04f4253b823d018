// The process that extracts and chunks documents (document-children.ts starts it): one document at a time, one reply
// each, for as long as the platform keeps it; it ends when the platform's process is gone.
import { Worker } from 'node:worker_threads';
import { CHILD_FLAG, type ChildJob, type ChildReply } from './document-children.ts';
import { chunksOf } from './document-process.ts';
import { errorText, RagExtractError } from './extract.ts';

/**
 * Ends the child once the platform's process is gone (reparented), even in the middle of a parse that holds the
 * child's own event loop: the deadline died with the parent, and an orphan could burn a core for hours.
 */
function watchParent(): void {
  const code = `const { workerData: w } = require('node:worker_threads');
setInterval(() => { if (process.ppid !== w.ppid) process.kill(w.pid, 'SIGKILL'); }, 500);`;
  new Worker(code, { eval: true, workerData: { ppid: process.ppid, pid: process.pid } }).unref();
}

async function reply(job: ChildJob): Promise<void> {
  let answer: ChildReply;
  try {
    answer = { ok: true, chunks: await chunksOf(job.source, job.limits) };
  } catch (err) {
    answer = { ok: false, final: err instanceof RagExtractError, message: err instanceof RagExtractError ? err.message : errorText(err) };
  }
  process.send!(answer);
}

if (process.argv[2] === CHILD_FLAG && process.send) {
  watchParent();
  process.once('disconnect', () => process.exit(0));
  // The parent sends the next document only after this one's reply.
  process.on('message', (job) => void reply(job as ChildJob));
}
