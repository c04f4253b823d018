// A document's extraction and chunking: small plain texts on this thread, everything else in a child process with a
// time and a heap limit, kept warm for its principal's next document; the same chunks either way, the same messages,
// and the event loop free meanwhile.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { chunkText, countTokens } from '../../src/rag/chunk.ts';
import {
  DOCUMENT_HEAP_MB,
  DOCUMENT_TIMEOUT_MS,
  INLINE_CHARS,
  documentChunks,
  type DocumentLimits,
  type DocumentSource,
} from '../../src/rag/document-process.ts';
import { RagExtractError } from '../../src/rag/extract.ts';
import { CHILD_FLAG, IDLE_MS, MAX_IDLE } from '../../src/rag/document-children.ts';
import { waitFor } from '../integration/frontend-helpers.ts';
import { makePdf } from '../helpers/documents.ts';
import { withEventLoopDelay } from '../helpers/event-loop.ts';

const LIMITS: DocumentLimits = { chunkSize: 200, chunkOverlap: 20, maxChunks: 10_000 };
const paragraph = (i: number) => `Paragraph ${i}. ${'The quick brown fox jumps over the lazy dog. '.repeat(12)}\n\n`;
const file = (name: string, contentType: string, bytes: Buffer | string): DocumentSource => ({
  file: { bytes: Buffer.from(bytes), contentType, filename: name },
});

async function failure(p: Promise<unknown>): Promise<Error> {
  const err = await p.then(
    () => new Error('expected a failure'),
    (e: unknown) => e as Error,
  );
  expect(err.message).not.toBe('expected a failure');
  return err;
}

/** The pids of this process's live document children, as ps sees them. */
function documentProcesses(): number[] {
  const ps = spawnSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  return ps.stdout
    .split('\n')
    .filter((line) => line.includes(CHILD_FLAG))
    .map((line) => Number(line.trim().split(/\s+/)[0]))
    .sort((a, b) => a - b);
}

/**
 * Waits until exactly `count` document children besides `known` are alive (an ended one may take a moment to leave
 * ps); their pids. Within less than IDLE_MS by default, so that a child kept by mistake cannot pass by expiring
 * meanwhile; children of `known` may come and go.
 */
function newProcesses(known: readonly number[], count: number, timeoutMs = IDLE_MS - 2_000): Promise<number[]> {
  return waitFor(async () => {
    const pids = documentProcesses().filter((pid) => !known.includes(pid));
    return pids.length === count ? pids : undefined;
  }, timeoutMs, `${count} new document processes`);
}

describe('limits', () => {
  it('are exported', () => {
    expect(DOCUMENT_TIMEOUT_MS).toBe(60_000);
    expect(DOCUMENT_HEAP_MB).toBe(512);
    expect(INLINE_CHARS).toBe(8 * 1024);
  });
});

describe('documentChunks', () => {
  it('chunks a large text in the child: the same chunks as inline, while the event loop stays free', async () => {
    const text = Array.from({ length: 3000 }, (_, i) => paragraph(i)).join('');
    const { result, maxDelayMs } = await withEventLoopDelay(() => documentChunks({ text }, LIMITS));
    expect(result).toEqual(chunkText(text, LIMITS));
    expect(maxDelayMs).toBeLessThan(200);
  });

  it('extracts files in the child with the messages of extractText', async () => {
    expect(await documentChunks(file('a.pdf', 'application/pdf', makePdf([['Hello PDF.']])), LIMITS)).toEqual(chunkText('Hello PDF.', LIMITS));
    expect(await documentChunks(file('a.json', 'application/json', '{"a":1}'), LIMITS)).toEqual(chunkText('{\n  "a": 1\n}', LIMITS));
    const bad = await failure(documentChunks(file('bad.pdf', 'application/pdf', '%PDF-1.4\nthis is not really a PDF\n'), LIMITS));
    expect(bad).toBeInstanceOf(RagExtractError);
    expect(bad.message).toBe('The PDF could not be read (it is damaged or encrypted): Invalid PDF structure.');
    const big = await failure(documentChunks(file('a.txt', 'text/plain', 'x'.repeat(20_000)), { ...LIMITS, maxChars: 10_000 }));
    expect(big.message).toBe('The extracted text is longer than the limit of 10,000 characters; split the file into smaller documents');
  });

  it('keeps small plain texts inline, with the same outcomes', async () => {
    expect(await documentChunks({ text: 'Hello world.' }, LIMITS)).toEqual(chunkText('Hello world.', LIMITS));
    expect(await documentChunks(file('a.md', 'text/markdown', '# Title\n\nBody.'), LIMITS)).toEqual(chunkText('# Title\n\nBody.', LIMITS));
    const empty = await failure(documentChunks({ text: '\u200b\u200b' }, LIMITS));
    expect(empty).toBeInstanceOf(RagExtractError);
    expect(empty.message).toBe('The document contains no text.');
    const text = 'One two three four five. Six seven eight nine ten. Eleven twelve thirteen.';
    const n = chunkText(text, { chunkSize: 8, chunkOverlap: 0 }).length;
    expect(n).toBeGreaterThan(1);
    const many = await failure(documentChunks({ text }, { chunkSize: 8, chunkOverlap: 0, maxChunks: 1 }));
    expect(many.message).toBe(`The document makes ${n} chunks; at most 1 per document. Split it, or use a collection with a larger chunkSize.`);
  });

  it('fails a document over the time limit, and says so', async () => {
    const text = paragraph(0).repeat(5_000);
    const started = performance.now();
    const err = await failure(documentChunks({ text }, LIMITS, { timeoutMs: 50 }));
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(err).toBeInstanceOf(RagExtractError);
    expect(err.message).toBe(
      'The document could not be processed: extracting and chunking its text took longer than 50 ms (it is too large or too complex); split it',
    );
  });

  it('reports a fault of the child that is not the document (bad options) as a plain error: the job retries those', async () => {
    const err = await failure(documentChunks({ text: 'x '.repeat(INLINE_CHARS) }, { chunkSize: 200, chunkOverlap: 500, maxChunks: 10 }));
    expect(err).not.toBeInstanceOf(RagExtractError);
    expect(err.message).toMatch(/^chunkOverlap must be an integer from 0 to chunkSize - 1/);
  });

  const childText = paragraph(1).repeat(20);

  it("keeps a warm child for its principal's next document, and for no one else's", async () => {
    await newProcesses([], 0, 5_000);
    expect(await documentChunks({ text: childText }, LIMITS, { principal: 'app-a/app' })).toEqual(chunkText(childText, LIMITS));
    const [appA] = await newProcesses([], 1, 5_000);
    expect(await documentChunks({ text: childText }, LIMITS, { principal: 'app-a/app' })).toEqual(chunkText(childText, LIMITS));
    // The child that served it is alive (kept): it is appA.
    expect(documentProcesses()).toEqual([appA]);
    await documentChunks({ text: childText }, LIMITS, { principal: 'app-a/user-1' });
    const [user1] = await newProcesses([appA!], 1);
    // Without a principal: a process of its own, ended after.
    await documentChunks({ text: childText }, LIMITS);
    expect(await newProcesses([appA!, user1!], 0)).toEqual([]);
  });

  it('ends a warm child that overran the time limit: its principal gets a new one', async () => {
    const before = documentProcesses();
    await documentChunks({ text: childText }, LIMITS, { principal: 'app-t/app' });
    const [warm] = await newProcesses(before, 1);
    const err = await failure(documentChunks({ text: paragraph(0).repeat(5_000) }, LIMITS, { principal: 'app-t/app', timeoutMs: 50 }));
    expect(err.message).toMatch(/took longer than 50 ms/);
    expect(await newProcesses(before, 0)).toEqual([]);
    expect(await documentChunks({ text: childText }, LIMITS, { principal: 'app-t/app' })).toEqual(chunkText(childText, LIMITS));
    const [next] = await newProcesses(before, 1);
    expect(next).not.toBe(warm);
  });

  it('judges a document again in a fresh child when its warm child fails under it; ends a child that faulted', async () => {
    const before = documentProcesses();
    await documentChunks({ text: childText }, LIMITS, { principal: 'app-k/app' });
    const [warm] = await newProcesses(before, 1);
    // The warm child dies under the next document (as from what an earlier document left it): the document is not failed.
    const text = paragraph(2).repeat(200);
    const chunks = documentChunks({ text }, LIMITS, { principal: 'app-k/app' });
    process.kill(warm!, 'SIGKILL');
    expect(await chunks).toEqual(chunkText(text, LIMITS));
    const [fresh] = await newProcesses(before, 1);
    expect(fresh).not.toBe(warm);
    // A fault that is not the document's (bad options): the error as before, and the child is not kept.
    const err = await failure(documentChunks({ text: childText }, { chunkSize: 200, chunkOverlap: 500, maxChunks: 10 }, { principal: 'app-k/app' }));
    expect(err).not.toBeInstanceOf(RagExtractError);
    expect(await newProcesses(before, 0)).toEqual([]);
  });

  it(`keeps at most ${MAX_IDLE} idle children, and ends them after ${IDLE_MS} ms idle`, async () => {
    for (let i = 0; i <= MAX_IDLE; i++) await documentChunks({ text: childText }, LIMITS, { principal: `app-${i}/app` });
    // Within less than IDLE_MS, so that expiry cannot stand in for the bound (children may expire earlier on a slow run).
    await waitFor(async () => (documentProcesses().length <= MAX_IDLE ? true : undefined), IDLE_MS - 2_000, `at most ${MAX_IDLE} idle children`);
    await newProcesses([], 0, IDLE_MS + 3_000);
  });

  // The inline path's bound: the slowest texts of INLINE_CHARS found, at the largest overlap kept inline. The
  // tokenizer is loaded first: its one-time load (~0.2 s) is not a cost of the input.
  const worst: [string, string][] = [
    ['runs of 125 CJK full stops', `${'。'.repeat(125)}a`],
    ['CJK full stops', '。'],
    ['combining accents', 'e\u0301'],
    ['family emoji', '👩‍👩‍👧‍👦'],
    ['digits', '1'],
    ['one-letter words', 'a '],
    ['blanks before a letter', `${' '.repeat(1000)}x\n`],
    ['tabs before a letter', `${'\t'.repeat(1000)}x\n`],
  ];
  it.each(worst)('keeps the event loop under 200 ms on the worst inline input: %s', async (name, unit) => {
    countTokens('warm up the tokenizer');
    const text = unit.repeat(Math.ceil(INLINE_CHARS / unit.length)).slice(0, INLINE_CHARS);
    for (const opts of [{ chunkSize: 32, chunkOverlap: 8 }, { chunkSize: 512, chunkOverlap: 128 }, { chunkSize: 8000, chunkOverlap: 2000 }]) {
      const { result, maxDelayMs } = await withEventLoopDelay(() => documentChunks({ text }, { ...opts, maxChunks: 10_000 }));
      console.log(`inline, ${name}, ${opts.chunkSize}/${opts.chunkOverlap}: ${result.length} chunks, event loop max delay ${maxDelayMs.toFixed(0)} ms`);
      expect(result.length).toBeGreaterThan(0);
      expect(maxDelayMs).toBeLessThan(200);
    }
  });
});
