import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { MAX_PIECE_CHARS, MIN_CHUNK_SIZE, MIN_FILL_RATIO, chunkText, countTokens, normalizeText, type Chunk } from '../../src/rag/chunk.ts';

// The library's own count, to check ours against it.
const lib = createRequire(import.meta.url)('gpt-tokenizer/cjs/encoding/cl100k_base') as typeof import('gpt-tokenizer/encoding/cl100k_base');

/** A deterministic prose-like text of about `chars` characters: paragraphs of 1-6 sentences of 4-23 words. */
function prose(chars: number, seed = 1): string {
  const words = (
    'the quick brown fox jumps over a lazy dog while retrieval augmented generation stores vector embeddings ' +
    'of every chunk in a database so that questions find their paragraph sentence boundary Bangladesh ' +
    'internationalization 2024 3.14159 (parenthesis) "quoted" naïve café über'
  ).split(' ');
  let state = seed;
  const rnd = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
  const paragraphs: string[] = [];
  let length = 0;
  while (length < chars) {
    const sentences: string[] = [];
    for (let s = 1 + Math.floor(rnd() * 6); s > 0; s--) {
      const w: string[] = [];
      for (let n = 4 + Math.floor(rnd() * 20); n > 0; n--) w.push(words[Math.floor(rnd() * words.length)]!);
      const sentence = w.join(' ');
      sentences.push(`${sentence[0]!.toUpperCase()}${sentence.slice(1)}.`);
    }
    const p = sentences.join(' ');
    paragraphs.push(p);
    length += p.length + 2;
  }
  return paragraphs.join('\n\n');
}

/** Every chunk is within the size, counted right, numbered in order, and non-empty. */
function expectWellFormed(chunks: Chunk[], chunkSize: number): void {
  chunks.forEach((c, i) => {
    expect(c.index).toBe(i);
    expect(c.text.length).toBeGreaterThan(0);
    expect(c.text).toBe(c.text.trim());
    expect(c.tokens).toBe(countTokens(c.text));
    expect(c.tokens).toBeLessThanOrEqual(chunkSize);
  });
}

/** The longest suffix of a that is a prefix of b (in characters). */
function overlapOf(a: string, b: string): number {
  for (let n = Math.min(a.length, b.length); n > 0; n--) if (a.endsWith(b.slice(0, n))) return n;
  return 0;
}

describe('countTokens (cl100k_base)', () => {
  it('counts known strings', () => {
    expect(countTokens('hello world')).toBe(2);
    expect(countTokens('')).toBe(0);
    expect(countTokens('Hello, world!')).toBe(4);
    expect(countTokens('tiktoken is great!')).toBe(6);
    expect(countTokens('antidisestablishmentarianism')).toBe(6);
  });

  it('treats special-token strings as ordinary text', () => {
    expect(countTokens('<|endoftext|>')).toBe(7);
  });

  it('agrees with the library on ordinary text', () => {
    const text = prose(50_000);
    expect(countTokens(text)).toBe(lib.countTokens(text));
  });

  it('counts a giant word in slices, fast, close to the exact count', () => {
    const word = 'abcdefghij'.repeat(100_000); // 1 MB without a break: exact BPE would be quadratic
    const t0 = performance.now();
    const n = countTokens(word);
    expect(performance.now() - t0).toBeLessThan(5_000);
    // The exact count of a 1,280-character stretch, scaled to the whole word: the sliced count is within 5%.
    const sample = word.slice(0, MAX_PIECE_CHARS * 5);
    const expected = (lib.countTokens(sample) * word.length) / sample.length;
    expect(n).toBeGreaterThan(expected * 0.95);
    expect(n).toBeLessThan(expected * 1.05);
  });
});

describe('normalizeText', () => {
  it('collapses blank lines and inner spaces, keeps paragraphs and indentation', () => {
    expect(normalizeText('  \r\n Title\t\t here  \r\n\r\n\r\n\r\npara\u00a0one\fpage two\u200b \n\n\n    code  x\n')).toBe(
      'Title here\n\npara one\n\npage two\n\n    code x',
    );
  });
});

describe('normalizeText on hostile input', () => {
  // /[ \t]+$/m retried from every blank of a run before a letter: 60 KB took 7 s, 150 KB more than 3 minutes.
  const cases: [string, string, string][] = [
    ['one line of spaces before a letter', `${' '.repeat(60_000)}x`, 'x'],
    ['tabs', `${'\t'.repeat(60_000)}x`, 'x'],
    ['spaces and tabs', `${' \t'.repeat(30_000)}x`, 'x'],
    ['many such lines', `a\n${`${' '.repeat(10_000)}x\n`.repeat(6)}`, `a\n${Array(6).fill(`${' '.repeat(10_000)}x`).join('\n')}`],
    ['a run between two words', `a${' '.repeat(60_000)}b`, 'a b'],
    ['a run before a line break', `a${' '.repeat(60_000)}\nb`, 'a\nb'],
    ['blank lines', `a${'\n \t'.repeat(30_000)}\nb`, 'a\n\nb'],
  ];
  it.each(cases)('is linear: %s', (_, text, expected) => {
    const t0 = performance.now();
    const out = normalizeText(text);
    expect(performance.now() - t0).toBeLessThan(100);
    expect(out).toBe(expected);
  });
});

describe('chunkText', () => {
  it('rejects bad options', () => {
    expect(() => chunkText('x', { chunkSize: MIN_CHUNK_SIZE - 1, chunkOverlap: 0 })).toThrow(RangeError);
    expect(() => chunkText('x', { chunkSize: 100, chunkOverlap: 100 })).toThrow(RangeError);
    expect(() => chunkText('x', { chunkSize: 100.5, chunkOverlap: 0 })).toThrow(RangeError);
    expect(() => chunkText('x', { chunkSize: 100, chunkOverlap: -1 })).toThrow(RangeError);
  });

  it('gives no chunks for blank text', () => {
    expect(chunkText('', { chunkSize: 512, chunkOverlap: 64 })).toEqual([]);
    expect(chunkText(' \n\n \t ', { chunkSize: 512, chunkOverlap: 64 })).toEqual([]);
  });

  it('keeps a short text whole, normalized', () => {
    expect(chunkText('Hello  world.\n\n\n\nBye.', { chunkSize: 512, chunkOverlap: 64 })).toEqual([{ index: 0, text: 'Hello world.\n\nBye.', tokens: 6 }]);
  });

  it('cuts at paragraph boundaries first', () => {
    // Three paragraphs of 6 tokens each; a chunk of 16 holds two of them whole.
    const text = 'Alpha beta gamma delta epsilon.\n\nZeta eta theta iota kappa.\n\nLambda mu nu xi omicron.';
    expect(countTokens('Alpha beta gamma delta epsilon.')).toBe(6);
    expect(chunkText(text, { chunkSize: 16, chunkOverlap: 0 })).toEqual([
      { index: 0, text: 'Alpha beta gamma delta epsilon.\n\nZeta eta theta iota kappa.', tokens: 13 },
      // 7 tokens in context (" Lambda"), 8 on its own ("Lambda"): a chunk counts its own text.
      { index: 1, text: 'Lambda mu nu xi omicron.', tokens: 8 },
    ]);
  });

  it('then at sentence boundaries, then at words', () => {
    const text = 'One two three four. Five six seven eight. Nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen.';
    expect(chunkText(text, { chunkSize: 12, chunkOverlap: 0 }).map((c) => c.text)).toEqual([
      'One two three four. Five six seven eight.',
      'Nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen.',
    ]);
    expect(chunkText(text, { chunkSize: 8, chunkOverlap: 0 }).map((c) => c.text)).toEqual([
      'One two three four.',
      'Five six seven eight.',
      'Nine ten eleven twelve thirteen fourteen fifteen sixteen',
      'seventeen.',
    ]);
  });

  it('does not take "e.g. word" as a sentence end', () => {
    const text = 'Use a tool, e.g. a hammer or a wrench or a screwdriver, for this. Then stop here now.';
    const chunks = chunkText(text, { chunkSize: 14, chunkOverlap: 0 });
    expect(chunks[0]!.text.endsWith('e.g.')).toBe(false);
    expectWellFormed(chunks, 14);
  });

  it('overlaps consecutive chunks by about chunkOverlap tokens, starting at a boundary', () => {
    const text = prose(20_000);
    const chunkSize = 128;
    const chunkOverlap = 32;
    const chunks = chunkText(text, { chunkSize, chunkOverlap });
    expectWellFormed(chunks, chunkSize);
    expect(chunks.length).toBeGreaterThan(10);
    for (let i = 1; i < chunks.length; i++) {
      const shared = overlapOf(chunks[i - 1]!.text, chunks[i]!.text);
      expect(shared).toBeGreaterThan(0);
      const sharedTokens = countTokens(chunks[i]!.text.slice(0, shared));
      expect(sharedTokens).toBeGreaterThanOrEqual(chunkOverlap / 2 - 2);
      // Counted on its own, the shared text may take a token or two more than in context (" Word" vs "Word").
      expect(sharedTokens).toBeLessThanOrEqual(chunkOverlap + 2);
      // The overlap starts at a word: the previous chunk has a space or line break just before it.
      const before = chunks[i - 1]!.text.length - shared - 1;
      expect([' ', '\n']).toContain(chunks[i - 1]!.text[before]);
    }
  });

  it('with no overlap, the chunks put back together are the normalized text', () => {
    const text = `${prose(30_000)}\n\n\n\n${prose(5_000, 7)}`;
    const chunks = chunkText(text, { chunkSize: 100, chunkOverlap: 0 });
    expectWellFormed(chunks, 100);
    const squash = (s: string) => s.replace(/\s+/g, ' ');
    expect(squash(chunks.map((c) => c.text).join(' '))).toBe(squash(normalizeText(text)));
    // Every chunk but the last ends at a sentence end (these paragraphs are made of short sentences).
    for (const c of chunks.slice(0, -1)) expect(c.text.endsWith('.')).toBe(true);
    // And is at least MIN_FILL_RATIO full.
    for (const c of chunks.slice(0, -1)) expect(c.tokens).toBeGreaterThanOrEqual(100 * MIN_FILL_RATIO - 2);
  });

  it('prefers a paragraph end to a later sentence end', () => {
    const paragraph = (n: number) => Array.from({ length: n }, (_, i) => `Sentence number ${i} here.`).join(' ');
    const text = `${paragraph(12)}\n\n${paragraph(12)}`;
    // 12 sentences of 5 tokens = 60 tokens a paragraph; chunks of 100: the first ends at the paragraph (60 >= 50).
    const chunks = chunkText(text, { chunkSize: 100, chunkOverlap: 0 });
    expect(chunks.map((c) => c.text)).toEqual([paragraph(12), paragraph(12)]);
  });

  it('cuts inside a word only when the word is longer than a chunk', () => {
    const giant = 'x'.repeat(2_000);
    const chunks = chunkText(`Small words first. ${giant} and after.`, { chunkSize: 64, chunkOverlap: 8 });
    expectWellFormed(chunks, 64);
    expect(chunks[0]!.text).toBe('Small words first.');
    expect(chunks.at(-1)!.text.endsWith('and after.')).toBe(true);
    expect(chunks.slice(1).every((c) => c.text.includes('x'))).toBe(true);
  });

  it('handles text without spaces (CJK) and emoji within the size', () => {
    const cjk = '自然语言处理是人工智能的一个分支。它研究计算机与人类语言之间的相互作用，包括理解和生成。'.repeat(40);
    const chunks = chunkText(cjk, { chunkSize: 64, chunkOverlap: 8 });
    expectWellFormed(chunks, 64);
    expect(chunks.slice(0, -1).every((c) => c.text.endsWith('。') || c.text.endsWith('，'))).toBe(true);
    expect(chunks.some((c) => c.text.startsWith('。') || c.text.startsWith('，'))).toBe(false);
    const emoji = '👩‍👩‍👧‍👦🏳️‍🌈🧑🏽‍🚀'.repeat(300);
    const e = chunkText(emoji, { chunkSize: MIN_CHUNK_SIZE, chunkOverlap: 2 });
    expectWellFormed(e, MIN_CHUNK_SIZE);
    for (const c of e) expect(c.text.isWellFormed()).toBe(true);
  });

  it('is linear: 1 MB of prose in well under a few seconds', () => {
    const text = prose(1_000_000);
    expect(text.length).toBeGreaterThanOrEqual(1_000_000);
    countTokens('warm up the tokenizer');
    const t0 = performance.now();
    const chunks = chunkText(text, { chunkSize: 512, chunkOverlap: 64 });
    const ms = performance.now() - t0;
    console.log(`chunkText: ${text.length} chars -> ${chunks.length} chunks of <= 512 tokens (overlap 64) in ${ms.toFixed(0)} ms`);
    expectWellFormed(chunks, 512);
    expect(ms).toBeLessThan(5_000);
    // Double the text, about double the time (not four times): measured on 2 MB against the 1 MB run.
    const t1 = performance.now();
    chunkText(text + '\n\n' + prose(1_000_000, 3), { chunkSize: 512, chunkOverlap: 64 });
    const ms2 = performance.now() - t1;
    console.log(`chunkText: 2 MB in ${ms2.toFixed(0)} ms`);
    expect(ms2).toBeLessThan(ms * 3.5 + 200);
  });

  it('judges a long run of blanks once, not once per piece of it', () => {
    // The indentation of a line stays; the tokenizer cuts a 1 MB run into 4,000 pieces, each a cut to judge.
    const t0 = performance.now();
    const chunks = chunkText(`a\n${' '.repeat(1_000_000)}x`, { chunkSize: 512, chunkOverlap: 64 });
    expect(performance.now() - t0).toBeLessThan(2_000);
    expect(chunks.map((c) => c.text)).toEqual(['a', 'x']);
  });

  it('a run of CJK marks is split into pieces once, not re-counted per mark', () => {
    const t0 = performance.now();
    const chunks = chunkText('。'.repeat(60_000), { chunkSize: 512, chunkOverlap: 64 });
    expect(performance.now() - t0).toBeLessThan(1_500);
    expectWellFormed(chunks, 512);
    expect(chunks.map((c) => c.text).join('').length).toBeGreaterThanOrEqual(60_000);
  });

  it('a 1 MB word is chunked quickly too', () => {
    const t0 = performance.now();
    const chunks = chunkText('ab1'.repeat(350_000) + 'x'.repeat(1_000_000), { chunkSize: 512, chunkOverlap: 64 });
    const ms = performance.now() - t0;
    console.log(`chunkText: a 2 MB single word -> ${chunks.length} chunks in ${ms.toFixed(0)} ms`);
    expect(ms).toBeLessThan(10_000);
    expect(Math.max(...chunks.map((c) => c.tokens))).toBeLessThanOrEqual(512);
  });
});
