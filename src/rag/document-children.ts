// The child processes that extract and chunk documents, on the platform's side. A process, not a worker thread: a
// thread's heap limit is best effort. A DOCX whose document.xml inflates to 300 MB of empty paragraphs grows one
// array past the limit before the thread can be stopped, and V8 then aborts the whole process (nodejs/node#47224). A
// child's abort is only the child's.
//
// Starting one costs about 0.5 s of CPU (Node, the parsers, the tokenizer's load), against ~30 ms to chunk a typical
// document in a warm one. So a child that answered is kept warm a while for the next document of the same principal
// (an app's own documents, or one end user's): a document only ever shares a process with documents of whoever could
// already read it, so a file crafted to leave something behind in the parsers meets no one else's text. A child that
// overran a limit, died or served MAX_DOCUMENTS is never reused.
import { fork, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Chunk } from './chunk.ts';
import type { DocumentLimits, DocumentSource } from './document-process.ts';
import { RagExtractError } from './extract.ts';

/** A document for the child (document-child.ts). */
export interface ChildJob {
  source: DocumentSource;
  limits: DocumentLimits;
}

/** final: the document cannot be ingested (a RagExtractError); otherwise a fault another attempt may not meet. */
export type ChildReply = { ok: true; chunks: Chunk[] } | { ok: false; final: boolean; message: string };

/** The argument the child is started with: importing document-child.ts elsewhere runs nothing. */
export const CHILD_FLAG = 'svc-rag-document-process-v2';

/** Heap limit of a process that extracts and chunks documents (MB). */
export const DOCUMENT_HEAP_MB = 512;
/** How long an idle child waits for its principal's next document before it is ended (ms). */
export const IDLE_MS = 5_000;
/** Most idle children kept, all principals together (the worker's default concurrency: each costs ~100 MB). */
export const MAX_IDLE = 4;
/** Documents one child serves before it is ended: bounds what a long life leaves in its heap. */
export const MAX_DOCUMENTS = 100;

/** The child's niceness (0 normal, 19 lowest): a share of a busy CPU about a tenth of the platform process's. */
const CHILD_NICE = 10;
/** How much of the child's stderr is kept: enough for V8's out-of-memory report. */
const STDERR_TAIL = 4096;
const CHILD_SCRIPT = fileURLToPath(new URL('./document-child.ts', import.meta.url));

class DocumentChild {
  readonly #process: ChildProcess;
  #stderr = '';
  #served = 0;
  #usable = true;

  constructor() {
    // No environment (the child parses untrusted files and needs none of the platform's secrets) and no inherited
    // flags: only the heap limit.
    this.#process = fork(CHILD_SCRIPT, [CHILD_FLAG], {
      env: {},
      execArgv: [`--max-old-space-size=${DOCUMENT_HEAP_MB}`],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    // An idle child keeps no process alive; a document in flight does, by its deadline's timer.
    this.#process.unref();
    this.#process.channel?.unref();
    (this.#process.stderr as Socket).unref();
    // Also when idle: an unheard 'error' would be thrown in the platform's process.
    this.#process.on('error', () => (this.#usable = false)).once('exit', () => (this.#usable = false));
    lowerPriority(this.#process.pid);
    this.#process.stderr!.setEncoding('utf8').on('data', (s: string) => (this.#stderr = (this.#stderr + s).slice(-STDERR_TAIL)));
  }

  /** Ended: killed by the platform, or gone by itself. */
  get ended(): boolean {
    return !this.#usable;
  }

  /** Whether it may take another document. */
  get usable(): boolean {
    return this.#usable && this.#served < MAX_DOCUMENTS && this.#process.connected;
  }

  /** The document's chunks; over the time limit, or when the child fails, it is ended and never used again. */
  run(job: ChildJob, timeoutMs: number): Promise<Chunk[]> {
    this.#served++;
    this.#stderr = '';
    const child = this.#process;
    return new Promise<Chunk[]>((resolve, reject) => {
      let done = false;
      const finish = (keep: boolean, settle: () => void) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        child.off('message', onReply).off('error', onError).off('close', onClose);
        if (!keep) this.end();
        settle();
      };
      // A fault that is not the document's (final: false) may be the process's: it is not kept.
      const onReply = (reply: ChildReply) =>
        finish(reply.ok || reply.final, () => (reply.ok ? resolve(reply.chunks) : reject(reply.final ? new RagExtractError(reply.message) : new Error(reply.message))));
      // Could not start (or lost its channel): not the document's fault, so a plain error that the job retries.
      const onError = (err: Error) => finish(false, () => reject(err));
      // stderr may still hold unread data when the child exits: judge it once the stream has ended.
      const onClose = (code: number | null, signal: NodeJS.Signals | null) => finish(false, () => reject(childDied(code, signal, this.#stderr)));
      const timer = setTimeout(() => finish(false, () => reject(overLimit(`took longer than ${duration(timeoutMs)}`))), timeoutMs);
      child.on('message', onReply).on('error', onError).on('close', onClose);
      child.send(job, (err) => err && onError(err));
    });
  }

  end(): void {
    this.#usable = false;
    this.#process.kill('SIGKILL');
  }
}

interface IdleChild {
  principal: string;
  child: DocumentChild;
  timer: NodeJS.Timeout;
}

/** Oldest first. */
const idle: IdleChild[] = [];

/**
 * A document's chunks from a child process: a warm one of `principal` if one waits, else a new one; afterwards kept
 * warm for the principal if it is still sound. Without a principal, a child of its own, ended after it.
 */
export async function chunksInChild(job: ChildJob, timeoutMs: number, principal: string | undefined): Promise<Chunk[]> {
  const warm = principal === undefined ? undefined : takeIdle(principal);
  try {
    return await runOn(warm ?? new DocumentChild(), job, timeoutMs, principal);
  } catch (err) {
    // A warm child that died, ran out of memory or overran the limit may owe it to the documents it served before
    // (their garbage, a parser's leftovers): the document is judged again, alone, in a fresh child.
    if (warm?.ended) return runOn(new DocumentChild(), job, timeoutMs, principal);
    throw err;
  }
}

async function runOn(child: DocumentChild, job: ChildJob, timeoutMs: number, principal: string | undefined): Promise<Chunk[]> {
  try {
    return await child.run(job, timeoutMs);
  } finally {
    if (principal !== undefined && child.usable) keepIdle(principal, child);
    else child.end();
  }
}

function takeIdle(principal: string): DocumentChild | undefined {
  for (let i = idle.length - 1; i >= 0; i--) {
    const entry = idle[i]!;
    if (entry.principal !== principal) continue;
    idle.splice(i, 1);
    clearTimeout(entry.timer);
    if (entry.child.usable) return entry.child;
    entry.child.end();
  }
  return undefined;
}

function keepIdle(principal: string, child: DocumentChild): void {
  const entry: IdleChild = { principal, child, timer: setTimeout(() => dropIdle(entry), IDLE_MS).unref() };
  idle.push(entry);
  while (idle.length > MAX_IDLE) dropIdle(idle[0]!);
}

function dropIdle(entry: IdleChild): void {
  const i = idle.indexOf(entry);
  if (i >= 0) idle.splice(i, 1);
  clearTimeout(entry.timer);
  entry.child.end();
}

/** Background work: on a busy machine the child yields the CPU to the platform's own process (its event loop). */
function lowerPriority(pid: number | undefined): void {
  if (pid === undefined) return; // not started: the 'error' event says why
  try {
    setPriority(pid, CHILD_NICE);
  } catch {
    // Already gone, or a platform that refuses: the child runs at the normal priority.
  }
}

function childDied(code: number | null, signal: NodeJS.Signals | null, stderr: string): RagExtractError {
  if (/heap out of memory|Allocation failed/.test(stderr)) return overLimit(`needs more than ${DOCUMENT_HEAP_MB} MB of memory`);
  return new RagExtractError(`The document could not be processed: its process stopped unexpectedly (${signal ? `signal ${signal}` : `exit code ${code}`})`);
}

function overLimit(what: string): RagExtractError {
  return new RagExtractError(`The document could not be processed: extracting and chunking its text ${what} (it is too large or too complex); split it`);
}

function duration(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`;
}
