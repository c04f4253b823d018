// Token-based chunking for RAG ingestion: text is normalized, cut into pieces by the cl100k_base pre-tokenizer
// (the encoding of OpenAI's embedding models: text-embedding-3-small/-large, ada-002), and packed into chunks of
// at most `chunkSize` tokens that prefer to end at a paragraph, then a sentence, then a word boundary, with
// consecutive chunks overlapping by about `chunkOverlap` tokens.
//
// Cost: one pass of the tokenizer over the text, one linear scan for the cuts and one more count of each chunk
// (about (1 + overlap/size) times the text): linear in the text, about 0.2 s for 1 MB of prose.
//
// The tokenizer (gpt-tokenizer, pure JS) is loaded on first use, once: its ranks cost ~150 ms and ~30 MB, which
// a process that never chunks does not pay.
import { createRequire } from 'node:module';

export interface Chunk {
  /** 0, 1, 2, ... in text order. */
  index: number;
  /** The chunk's text: a slice of the normalized text, trimmed. */
  text: string;
  /** Its cl100k_base token count (countTokens(text)); never above chunkSize. */
  tokens: number;
}

export interface ChunkOptions {
  /** Most tokens in one chunk; an integer >= MIN_CHUNK_SIZE. */
  chunkSize: number;
  /** Tokens shared by consecutive chunks (about; never more); an integer >= 0 and < chunkSize. */
  chunkOverlap: number;
}

/** The smallest chunkSize accepted (every character fits in a chunk of this many tokens). */
export const MIN_CHUNK_SIZE = 8;
/**
 * Pre-tokenizer pieces longer than this many characters (a run of letters or symbols without a break, e.g. a
 * base64 blob) are counted in slices of this size: BPE is quadratic in the piece length, so one 1 MB "word"
 * would otherwise take minutes. For such runs the count may exceed the exact one by about one token per slice;
 * every other text is counted exactly as cl100k_base does.
 */
export const MAX_PIECE_CHARS = 256;
/** A chunk ends at a paragraph or sentence boundary only if that keeps at least this share of chunkSize. */
export const MIN_FILL_RATIO = 0.5;

type Cl100k = typeof import('gpt-tokenizer/encoding/cl100k_base');

interface Tokenizer {
  countTokens: Cl100k['countTokens'];
  encodeGenerator: Cl100k['encodeGenerator'];
  splitRegex: RegExp;
}

/** Special-token strings such as <|endoftext|> in a document are ordinary text, never control tokens or errors. */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

let tokenizer: Tokenizer | undefined;

function tok(): Tokenizer {
  if (!tokenizer) {
    // createRequire keeps chunkText synchronous while loading the ranks lazily (the CJS build is the same code).
    const require = createRequire(import.meta.url);
    const enc = require('gpt-tokenizer/cjs/encoding/cl100k_base') as Cl100k;
    const { CL100K_TOKEN_SPLIT_REGEX } = require('gpt-tokenizer/cjs/encodingParams/constants') as { CL100K_TOKEN_SPLIT_REGEX: RegExp };
    tokenizer = {
      countTokens: enc.countTokens,
      encodeGenerator: enc.encodeGenerator,
      splitRegex: new RegExp(CL100K_TOKEN_SPLIT_REGEX.source, CL100K_TOKEN_SPLIT_REGEX.flags),
    };
  }
  return tokenizer;
}

/**
 * Some run long enough that a pre-tokenizer piece may exceed MAX_PIECE_CHARS (letters, symbols or whitespace;
 * digits come in pieces of at most 3). Conservative: a false alarm only takes the slower per-piece path.
 */
const LONG_RUN = new RegExp(String.raw`\p{L}{${MAX_PIECE_CHARS / 2 - 2}}|[^\s\p{L}\p{N}]{${MAX_PIECE_CHARS / 2 - 2}}|\s{${MAX_PIECE_CHARS / 2 - 2}}`, 'u');

/** Tokens of one pre-tokenizer piece, in slices of MAX_PIECE_CHARS when it is longer. */
function pieceTokens(t: Tokenizer, piece: string): number {
  if (piece.length <= MAX_PIECE_CHARS) return t.countTokens(piece, PLAIN_TEXT);
  let n = 0;
  for (const slice of slices(piece, MAX_PIECE_CHARS)) n += t.countTokens(slice, PLAIN_TEXT);
  return n;
}

/** Cuts s into slices of at most max UTF-16 units, never inside a surrogate pair. */
function* slices(s: string, max: number): Generator<string> {
  let i = 0;
  while (i < s.length) {
    let end = Math.min(s.length, i + max);
    if (end < s.length && isHighSurrogate(s.charCodeAt(end - 1))) end--;
    yield s.slice(i, end);
    i = end;
  }
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

/** cl100k_base tokens of text (exact, except inside runs longer than MAX_PIECE_CHARS: see there). */
export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  const t = tok();
  if (!LONG_RUN.test(text)) return t.countTokens(text, PLAIN_TEXT);
  let n = 0;
  for (const m of text.matchAll(t.splitRegex)) n += pieceTokens(t, m[0]);
  return n;
}

/**
 * The whitespace rules applied before chunking (and by extractText): line ends become \n; a form feed or paragraph
 * separator becomes a paragraph break; control characters, soft hyphens and zero-width spaces go (zero-width
 * joiners stay: emoji and some scripts need them); exotic spaces become a space; runs of spaces and tabs inside a
 * line become one space (leading indentation stays); trailing spaces go; more than one blank line becomes one;
 * the text is trimmed.
 *
 * Linear in the text, whatever it holds: each pattern is a character class, a greedy run of one class, or a run
 * of blanks that only the first blank of a run may start (the lookbehinds), so a run is tried once, not once per
 * blank: /[ \t]+$/m alone retried from every blank of a long run before a letter (quadratic: 7 s for 60 KB).
 */
export function normalizeText(text: string): string {
  return text
    .replace(/\r\n?|\u2028|\u0085/g, '\n')
    .replace(/[\f\v\u2029]/g, '\n\n')
    .replace(/[\u0000-\u0008\u000e-\u001f\u007f\u00ad\u200b\u2060\ufeff]/g, '')
    .replace(/[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/g, ' ')
    .replace(/(?<=\S)[ \t]+(?=\S)/g, ' ')
    .replace(/(?<![ \t])[ \t]+$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Boundary strengths: how good a place to cut, between two pre-tokenizer pieces. */
const MID_WORD = 0;
const WORD = 1;
const SENTENCE = 2; // also a single line break
const PARAGRAPH = 3;

const SENTENCE_END = new Set(['.', '!', '?', '…', '。', '！', '？', '‼', '⁇', '⁈', '⁉']);
const CLOSERS = new Set(['"', "'", ')', ']', '}', '»', '’', '”', '›', '」', '』', '）']);
const CJK_SENTENCE_END = new Set(['。', '！', '？']);
const CJK_CLAUSE_END = new Set(['，', '、', '；', '：']);

function isCjkMark(c: string): boolean {
  return CJK_SENTENCE_END.has(c) || CJK_CLAUSE_END.has(c);
}

function isSpace(c: string | undefined): boolean {
  return c === ' ' || c === '\n' || c === '\t';
}

/**
 * strength[i]: how good a cut before piece i is (0 < i < n), for pieces starting at `start` in normalized text.
 * A cut in or next to a run of whitespace is judged by the whole run; the runs are measured once each (the cuts
 * come in text order), so a long run cut into many pieces costs its length once, not once per piece.
 */
function strengthsOf(text: string, start: readonly number[], n: number): Uint8Array {
  const strength = new Uint8Array(n + 1);
  let runFrom = 0; // the blank run last measured, [runFrom, runTo), and its line breaks
  let runTo = 0;
  let newlines = 0;
  for (let i = 1; i < n; i++) {
    const p = start[i]!;
    const before = text[p - 1];
    if (!isSpace(before) && !isSpace(text[p])) {
      strength[i] = strengthInWord(before);
      continue;
    }
    if (!(runFrom < runTo && runFrom <= p && p <= runTo)) {
      runFrom = p;
      while (runFrom > 0 && isSpace(text[runFrom - 1])) runFrom--;
      runTo = p;
      while (runTo < text.length && isSpace(text[runTo])) runTo++;
      newlines = 0;
      for (let k = runFrom; k < runTo; k++) if (text[k] === '\n') newlines++;
    }
    strength[i] = newlines >= 2 ? PARAGRAPH : newlines === 1 || sentenceEndsAt(text, runFrom, runTo) ? SENTENCE : WORD;
  }
  strength[n] = PARAGRAPH;
  return strength;
}

/** A cut between two non-blank characters: after a CJK sentence or clause mark, else inside a word. */
function strengthInWord(before: string | undefined): number {
  if (before !== undefined && CJK_SENTENCE_END.has(before)) return SENTENCE;
  if (before !== undefined && CJK_CLAUSE_END.has(before)) return WORD;
  return MID_WORD;
}

/**
 * Whether the text before the blank run [a, b) ends a sentence: . ! ? (perhaps followed by closing quotes or
 * brackets), unless the next word starts in lower case ("e.g. this").
 */
function sentenceEndsAt(text: string, a: number, b: number): boolean {
  let k = a - 1;
  for (let j = 0; j < 3 && k >= 0 && CLOSERS.has(text[k]!); j++) k--;
  const next = text[b];
  return k >= 0 && SENTENCE_END.has(text[k]!) && !(next !== undefined && /\p{Ll}/u.test(next));
}

/** The pieces of normalized text: start offsets (plus text.length at the end) and their token counts. */
interface Pieces {
  start: number[];
  tokens: number[];
}

function piecesOf(text: string, chunkSize: number): Pieces {
  const t = tok();
  const start: number[] = [];
  const tokens: number[] = [];
  // A piece of more than a quarter of a chunk (a giant word) is cut in code-point halves until it fits, so that
  // a chunk always holds at least a few pieces.
  const maxPieceTokens = Math.max(1, Math.floor(chunkSize / 4));
  const push = (from: number, to: number, n: number) => {
    // The pre-tokenizer glues punctuation to the letters after it; CJK sentence and clause marks are split off so
    // that a chunk can end right after them: each leading mark is a piece, the rest one more, counted once (not
    // once per mark: a run of marks would cost the square of its length).
    if (to - from > 1 && isCjkMark(text[from]!)) {
      let at = from;
      for (; to - at > 1 && isCjkMark(text[at]!); at++) {
        start.push(at);
        tokens.push(t.countTokens(text[at]!, PLAIN_TEXT));
      }
      push(at, to, t.countTokens(text.slice(at, to), PLAIN_TEXT));
      return;
    }
    if (n > maxPieceTokens && to - from > 1) {
      let mid = from + Math.floor((to - from) / 2);
      if (isHighSurrogate(text.charCodeAt(mid - 1))) mid--;
      if (mid > from) {
        push(from, mid, t.countTokens(text.slice(from, mid), PLAIN_TEXT));
        push(mid, to, t.countTokens(text.slice(mid, to), PLAIN_TEXT));
        return;
      }
    }
    start.push(from);
    tokens.push(n);
  };
  if (!LONG_RUN.test(text)) {
    // Fast path: the tokenizer's own generator yields the tokens of each pre-tokenizer match, in the order of
    // the same regex's matches here.
    const re = new RegExp(t.splitRegex.source, t.splitRegex.flags);
    let at = 0;
    for (const ids of t.encodeGenerator(text, PLAIN_TEXT)) {
      const m = re.exec(text);
      if (!m || m.index !== at) throw new Error('chunkText: the tokenizer and its split pattern disagree');
      push(at, at + m[0].length, ids.length);
      at += m[0].length;
    }
    if (at !== text.length) throw new Error('chunkText: the tokenizer did not cover the text');
  } else {
    for (const m of text.matchAll(t.splitRegex)) {
      const from = m.index;
      if (m[0].length <= MAX_PIECE_CHARS) {
        push(from, from + m[0].length, t.countTokens(m[0], PLAIN_TEXT));
        continue;
      }
      let at = from;
      for (const slice of slices(m[0], MAX_PIECE_CHARS)) {
        push(at, at + slice.length, t.countTokens(slice, PLAIN_TEXT));
        at += slice.length;
      }
    }
  }
  start.push(text.length);
  return { start, tokens };
}

/**
 * Splits text into chunks of at most chunkSize cl100k_base tokens. The text is normalized first (normalizeText).
 * A chunk ends at the last paragraph break that keeps it at least MIN_FILL_RATIO full, else at the last sentence
 * end (or line break) that does, else at the last word boundary; only a single word longer than the whole chunk
 * is cut inside. The next chunk starts about chunkOverlap tokens before the end of the previous one (never
 * more), at the strongest boundary in the upper half of that span, else at the first word in it; with no word
 * start in it (text without spaces), the chunks do not overlap. Empty or blank text gives no chunks.
 */
export function chunkText(text: string, opts: ChunkOptions): Chunk[] {
  const { chunkSize, chunkOverlap } = opts;
  if (!Number.isInteger(chunkSize) || chunkSize < MIN_CHUNK_SIZE) {
    throw new RangeError(`chunkSize must be an integer of at least ${MIN_CHUNK_SIZE}; got ${chunkSize}`);
  }
  if (!Number.isInteger(chunkOverlap) || chunkOverlap < 0 || chunkOverlap >= chunkSize) {
    throw new RangeError(`chunkOverlap must be an integer from 0 to chunkSize - 1 (${chunkSize - 1}); got ${chunkOverlap}`);
  }
  const norm = normalizeText(text);
  if (norm.length === 0) return [];

  const { start, tokens } = piecesOf(norm, chunkSize);
  const n = tokens.length;
  // cum[i]: tokens before piece i.
  const cum = new Float64Array(n + 1);
  for (let i = 0; i < n; i++) cum[i + 1] = cum[i]! + tokens[i]!;
  const strength = strengthsOf(norm, start, n);

  const chunks: Chunk[] = [];
  let s = 0;
  let prevEnd = 0;
  let eMax = 0; // moves forward only (s only grows), so finding each window's end is linear overall
  while (s < n) {
    let limit = chunkSize;
    let e: number;
    let chunk: string;
    let count: number;
    for (;;) {
      if (eMax < s) eMax = s;
      while (eMax < n && cum[eMax + 1]! - cum[s]! <= limit) eMax++;
      while (eMax > s && cum[eMax]! - cum[s]! > limit) eMax--;
      e = eMax === s ? s + 1 : pickEnd(s, eMax, limit);
      chunk = norm.slice(start[s]!, start[e]!).trim();
      count = countTokens(chunk);
      // The pieces' sum is the count in context; the trimmed slice alone can count a token or two more
      // (" Word" is one token, "Word" may be two): cut earlier then.
      if (count <= chunkSize || e === s + 1) break;
      limit = Math.min(cum[e]! - cum[s]! - 1, limit - (count - chunkSize));
      eMax = s;
    }
    if (e <= prevEnd && s !== prevEnd) {
      // The overlap left no room for new text (a huge overlap, or big pieces): start right after the last chunk.
      s = prevEnd;
      continue;
    }
    if (chunk.length > 0) chunks.push({ index: chunks.length, text: chunk, tokens: count });
    if (e >= n) break;
    prevEnd = e;
    s = overlapStart(s, e);
  }
  return chunks;

  /** The end (exclusive piece index) of a chunk starting at piece s whose longest fit ends at eMax. */
  function pickEnd(s: number, eMax: number, limit: number): number {
    if (eMax >= n) return n;
    const minFill = cum[s]! + Math.ceil(limit * MIN_FILL_RATIO);
    let para = -1;
    let sentence = -1;
    let word = -1;
    for (let i = eMax; i > s; i--) {
      const st = strength[i]!;
      if (cum[i]! >= minFill) {
        if (st >= PARAGRAPH) {
          para = i;
          break; // the best kind, and the latest one
        }
        if (st >= SENTENCE && sentence < 0) sentence = i;
        if (st >= WORD && word < 0) word = i;
      } else {
        if (sentence >= 0 || word >= 0) break;
        if (st >= WORD) {
          word = i;
          break;
        }
      }
    }
    if (para >= 0) return para;
    if (sentence >= 0) return sentence;
    if (word >= 0) return word;
    return eMax; // one word longer than the chunk: cut inside it
  }

  /** Where the chunk after [s, e) starts: at most chunkOverlap tokens before e, at the best boundary. */
  function overlapStart(s: number, e: number): number {
    if (chunkOverlap === 0) return e;
    const earliest = cum[e]! - chunkOverlap; // the next start may not be before this many tokens
    const half = cum[e]! - Math.ceil(chunkOverlap / 2);
    let first = e;
    while (first - 1 > s && cum[first - 1]! >= earliest) first--;
    if (first === e) return e; // the last piece alone is longer than the overlap
    let best = -1;
    let bestStrength = -1;
    for (let i = first; i < e && cum[i]! <= half; i++) {
      if (strength[i]! > bestStrength) {
        best = i;
        bestStrength = strength[i]!;
      }
    }
    if (bestStrength >= WORD) return best;
    for (let i = first; i < e; i++) if (strength[i]! >= WORD) return i;
    // No word starts in the span: overlap inside a word only when the chunk itself was cut inside one (a word
    // longer than a chunk); otherwise no overlap rather than a chunk starting mid-word.
    return strength[e] === MID_WORD ? first : e;
  }
}
