// A document's chunks, computed off the event loop. Extraction (every kind), normalization and chunking of one
// document run in a child process of their own, with a wall-clock limit and a heap limit: `npm start` runs the job
// worker in the API's process, so a text or file that takes long (a quadratic pattern, a PDF that never ends) or
// much memory (a zip bomb) would otherwise hold every tenant's requests or end the process. Over a limit, the child
// is killed and the document fails with a message saying why.
//
// A process, not a worker thread: a thread's heap limit is best effort. A DOCX whose document.xml inflates to 300 MB
// of empty paragraphs grows one array past the limit before the thread can be stopped, and V8 then aborts the whole
// process (nodejs/node#47224). A child's abort is only the child's. Its cost is about a thread's: both load the
// tokenizer (~0.2 s), which dominates.
//
// Small plain texts stay on the calling thread: a child's start costs far more than their work (measured worst
// case at INLINE_CHARS).
import { fork } from 'node:child_process';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { chunkText, type Chunk, type ChunkOptions } from './chunk.ts';
import { errorText, extractText, fileKind, RagExtractError, type ExtractOptions } from './extract.ts';

/** Wall-clock limit of one document's extraction and chunking (ms). */
export const DOCUMENT_TIMEOUT_MS = 60_000;
/** Heap limit of the process that extracts and chunks a document (MB). */
export const DOCUMENT_HEAP_MB = 512;
/**
 * Texts (and text or Markdown files) up to this many characters (bytes) are chunked on the calling thread. Every
 * step is linear; the slowest 8 KB found (runs of 125 CJK full stops, which cl100k's BPE merges a pair at a time)
 * holds the event loop about 50 ms on a busy 2-core machine (test/unit/rag-document.test.ts measures it).
 */
export const INLINE_CHARS = 8 * 1024;

export type DocumentSource = { text: string } | { file: { bytes: Uint8Array; contentType: string; filename: string } };

export interface DocumentLimits extends ChunkOptions, ExtractOptions {
  /** Most chunks one document may make. */
  maxChunks: number;
}

export interface DocumentOptions {
  /** Default DOCUMENT_TIMEOUT_MS. */
  timeoutMs?: number | undefined;
}

/**
 * The chunks of a document: its text (given, or extracted from a file), normalized and chunked. Throws
 * RagExtractError when the document cannot be ingested (no text, unreadable, over a limit, over the time or
 * memory limit); other errors when another attempt may succeed (the child could not start).
 */
export function documentChunks(source: DocumentSource, limits: DocumentLimits, options: DocumentOptions = {}): Promise<Chunk[]> {
  if (staysInline(source, limits)) return chunksOf(source, limits);
  return inChild(source, limits, options.timeoutMs ?? DOCUMENT_TIMEOUT_MS);
}

/**
 * Plain text of at most INLINE_CHARS, with an overlap of at most a quarter of a chunk: each chunk is counted again
 * whole, so overlapping chunks multiply the work (up to chunkSize / (chunkSize / 2 - chunkOverlap) times, as a
 * chunk may end half full); a quarter keeps that at 4.
 */
function staysInline(source: DocumentSource, limits: DocumentLimits): boolean {
  if (limits.chunkOverlap * 4 > limits.chunkSize) return false;
  if ('text' in source) return source.text.length <= INLINE_CHARS;
  const { bytes, contentType, filename } = source.file;
  const kind = fileKind(contentType, filename, bytes);
  return (kind === 'text' || kind === 'markdown') && bytes.length <= INLINE_CHARS;
}

async function chunksOf(source: DocumentSource, limits: DocumentLimits): Promise<Chunk[]> {
  let text: string;
  if ('text' in source) {
    text = source.text;
  } else {
    const { bytes, contentType, filename } = source.file;
    text = await extractText(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), contentType, filename, limits);
  }
  const chunks = chunkText(text, limits);
  if (chunks.length === 0) throw new RagExtractError('The document contains no text.');
  if (chunks.length > limits.maxChunks) {
    throw new RagExtractError(
      `The document makes ${chunks.length} chunks; at most ${limits.maxChunks} per document. Split it, or use a collection with a larger chunkSize.`,
    );
  }
  return chunks;
}

// --- the child process ------------------------------------------------------------------------------------------

/** The child's argument: this very module is its script (see the end of the file). */
const CHILD_FLAG = 'svc-rag-document-process-v1';
/** The child's niceness (0 normal, 19 lowest): a share of a busy CPU about a tenth of the platform process's. */
const CHILD_NICE = 10;
/** How much of the child's stderr is kept: enough for V8's out-of-memory report. */
const STDERR_TAIL = 4096;

interface ChildJob {
  source: DocumentSource;
  limits: DocumentLimits;
}

/** final: the document cannot be ingested (a RagExtractError); otherwise a fault another attempt may not meet. */
type ChildReply = { ok: true; chunks: Chunk[] } | { ok: false; final: boolean; message: string };

function inChild(source: DocumentSource, limits: DocumentLimits, timeoutMs: number): Promise<Chunk[]> {
  return new Promise<Chunk[]>((resolve, reject) => {
    // No environment (the child parses untrusted files and needs none of the platform's secrets) and no inherited
    // flags: only the heap limit.
    const child = fork(fileURLToPath(import.meta.url), [CHILD_FLAG], {
      env: {},
      execArgv: [`--max-old-space-size=${DOCUMENT_HEAP_MB}`],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    lowerPriority(child.pid);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr = (stderr + s).slice(-STDERR_TAIL)));
    let done = false;
    const finish = (settle: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      settle();
    };
    const timer = setTimeout(() => finish(() => reject(overLimit(`took longer than ${duration(timeoutMs)}`))), timeoutMs);
    child.once('message', (reply: ChildReply) =>
      finish(() => (reply.ok ? resolve(reply.chunks) : reject(reply.final ? new RagExtractError(reply.message) : new Error(reply.message)))),
    );
    // Could not start (or lost its channel): not the document's fault, so a plain error that the job retries.
    child.once('error', (err) => finish(() => reject(err)));
    // stderr may still hold unread data when the child exits: judge it once the stream has ended.
    child.once('close', (code, signal) => finish(() => reject(childDied(code, signal, stderr))));
    child.send({ source, limits } satisfies ChildJob);
  });
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

/**
 * In the child: ends it once the platform's process is gone (reparented), even in the middle of a parse that holds
 * the child's own event loop: the deadline died with the parent, and an orphan could burn a core for hours.
 */
function watchParent(): void {
  const code = `const { workerData: w } = require('node:worker_threads');
setInterval(() => { if (process.ppid !== w.ppid) process.kill(w.pid, 'SIGKILL'); }, 500);`;
  new Worker(code, { eval: true, workerData: { ppid: process.ppid, pid: process.pid } }).unref();
}

/** In the child: one job, one reply, then exit; and exit too if the parent goes away. */
function serveOneJob(): void {
  watchParent();
  process.once('disconnect', () => process.exit(0));
  process.once('message', (job) => void reply(job as ChildJob));
}

async function reply(job: ChildJob): Promise<void> {
  let answer: ChildReply;
  try {
    answer = { ok: true, chunks: await chunksOf(job.source, job.limits) };
  } catch (err) {
    answer = { ok: false, final: err instanceof RagExtractError, message: err instanceof RagExtractError ? err.message : errorText(err) };
  }
  process.send!(answer, () => process.exit(0));
}

if (process.argv[2] === CHILD_FLAG && process.send) serveOneJob();
