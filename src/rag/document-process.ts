// A document's chunks, computed off the event loop. Extraction (every kind), normalization and chunking of one
// document run in a child process (document-children.ts), with a wall-clock limit and a heap limit: `npm start` runs
// the job worker in the API's process, so a text or file that takes long (a quadratic pattern, a PDF that never ends)
// or much memory (a zip bomb) would otherwise hold every tenant's requests or end the process. Over a limit, the child
// is killed and the document fails with a message saying why.
//
// Small plain texts stay on the calling thread: a child's work costs more than theirs (measured worst case at
// INLINE_CHARS).
import { chunkText, type Chunk, type ChunkOptions } from './chunk.ts';
import { chunksInChild } from './document-children.ts';
import { extractText, fileKind, RagExtractError, type ExtractOptions } from './extract.ts';

export { DOCUMENT_HEAP_MB } from './document-children.ts';

/** Wall-clock limit of one document's extraction and chunking (ms). */
export const DOCUMENT_TIMEOUT_MS = 60_000;
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
  /**
   * Whose document it is (an app, or an end user of one): documents of one principal may share a warm child process.
   * Without one, the document has a process of its own.
   */
  principal?: string | undefined;
}

/**
 * The chunks of a document: its text (given, or extracted from a file), normalized and chunked. Throws
 * RagExtractError when the document cannot be ingested (no text, unreadable, over a limit, over the time or
 * memory limit); other errors when another attempt may succeed (the child could not start).
 */
export function documentChunks(source: DocumentSource, limits: DocumentLimits, options: DocumentOptions = {}): Promise<Chunk[]> {
  if (staysInline(source, limits)) return chunksOf(source, limits);
  return chunksInChild({ source, limits }, options.timeoutMs ?? DOCUMENT_TIMEOUT_MS, options.principal);
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

/** The chunks, on this thread: inline, or in the child (document-child.ts). */
export async function chunksOf(source: DocumentSource, limits: DocumentLimits): Promise<Chunk[]> {
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
