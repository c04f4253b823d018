// Large texts are chunked in a worker thread: the same chunks as inline, while the event loop stays free.
import { describe, expect, it } from 'vitest';
import { chunkText } from '../../src/rag/chunk.ts';
import { chunkTextOffThread, INLINE_CHUNK_CHARS } from '../../src/rag/chunk-thread.ts';

const OPTS = { chunkSize: 200, chunkOverlap: 20 };
const paragraph = (i: number) => `Paragraph ${i}. ${'The quick brown fox jumps over the lazy dog. '.repeat(12)}\n\n`;

describe('chunkTextOffThread', () => {
  it('gives exactly the inline chunks for a large text, and the event loop keeps turning meanwhile', async () => {
    const text = Array.from({ length: 3000 }, (_, i) => paragraph(i)).join('');
    expect(text.length).toBeGreaterThan(INLINE_CHUNK_CHARS * 10);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const started = performance.now();
    const chunks = await chunkTextOffThread(text, OPTS);
    const elapsed = performance.now() - started;
    clearInterval(timer);
    expect(chunks).toEqual(chunkText(text, OPTS));
    // A blocked loop would not tick at all until the chunking returned.
    expect(ticks).toBeGreaterThan(Math.min(10, elapsed / 20));
  });

  it('chunks a small text inline, and reports bad options from the thread as errors', async () => {
    expect(await chunkTextOffThread('Hello world.', OPTS)).toEqual(chunkText('Hello world.', OPTS));
    await expect(chunkTextOffThread('x '.repeat(INLINE_CHUNK_CHARS), { chunkSize: 200, chunkOverlap: 500 })).rejects.toThrow(/chunkOverlap/);
  });
});
