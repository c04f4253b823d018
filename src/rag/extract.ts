// Text extraction for RAG ingestion of files from an app's storage.
//
// Supported kinds (chosen by content type first, then by the filename's extension, then, for PDF only, by the
// file's first bytes):
// - text: text/plain and any other text/* except HTML, Markdown and RTF; .txt, .text. UTF-8 (invalid bytes become
//   U+FFFD), or UTF-16 with a byte order mark. A file with NUL bytes in its first 8 KB is binary, not text.
// - Markdown: text/markdown, text/x-markdown; .md, .markdown. Kept as it is (the markup is text too).
// - HTML: text/html, application/xhtml+xml; .html, .htm, .xhtml. The visible text of <body>: <head>, scripts,
//   styles, templates, SVG and elements with the `hidden` attribute are dropped; block elements become line
//   breaks (paragraph-like ones a blank line), list items start with "- ", table cells are separated by " | ".
// - PDF: application/pdf; .pdf. Text of each page (PDF.js through unpdf), pages separated by a blank line.
// - DOCX: application/vnd.openxmlformats-officedocument.wordprocessingml.document; .docx. Raw text of the
//   paragraphs (mammoth).
// - JSON: application/json and any */*+json; .json. Parsed, then pretty-printed with 2-space indentation (as
//   JSON.stringify(value, null, 2) does, except that nesting deeper than JSON_MAX_INDENT_LEVELS is indented no
//   further): keys stay next to their values, which is what a question about the data needs. Invalid JSON fails.
// Every result goes through normalizeText (see chunk.ts); a result with no text fails.
//
// Every step here is linear in the input or bounded by the limits below; the libraries' parsers are not all so.
// Callers run this in the document process (document-process.ts), whose time and heap limits bound the whole
// extraction, so that a damaged or hostile file can neither crash the platform's process (out of memory) nor hold
// its event loop (an endless parse).
import { Parser } from 'htmlparser2';
import { normalizeText } from './chunk.ts';

/**
 * A document that cannot be ingested as it is (no text, unreadable, over a limit): final, no retry helps.
 * `message` is written for the document's `errorMessage`.
 */
export class RagExtractError extends Error {
  override name = 'RagExtractError';
}

/** Largest file extracted (bytes); the spec's default storage file size limit. */
export const MAX_FILE_BYTES = 10 * 1024 * 1024;
/** Longest extracted text (characters, after whitespace normalization), unless options.maxChars says otherwise. */
export const MAX_EXTRACTED_CHARS = 5_000_000;
/** Most pages of a PDF. */
export const MAX_PDF_PAGES = 2_000;
/**
 * JSON nested deeper than this is indented no further: with indentation growing with the depth, the text grows
 * with the square of the depth (6 KB of brackets made 9 MB of spaces).
 */
export const JSON_MAX_INDENT_LEVELS = 16;

export const SUPPORTED_KINDS_TEXT = 'text, Markdown, HTML, PDF, DOCX, JSON';

export type RagFileKind = 'text' | 'markdown' | 'html' | 'pdf' | 'docx' | 'json';

export interface ExtractOptions {
  /** Default MAX_EXTRACTED_CHARS. */
  maxChars?: number;
  /** Default MAX_FILE_BYTES. */
  maxBytes?: number;
  /** Default MAX_PDF_PAGES. */
  maxPdfPages?: number;
}

const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

const BY_TYPE: Record<string, RagFileKind> = {
  'text/plain': 'text',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/pdf': 'pdf',
  [DOCX_TYPE]: 'docx',
  'application/json': 'json',
};

const BY_EXTENSION: Record<string, RagFileKind> = {
  txt: 'text',
  text: 'text',
  md: 'markdown',
  markdown: 'markdown',
  html: 'html',
  htm: 'html',
  xhtml: 'html',
  pdf: 'pdf',
  docx: 'docx',
  json: 'json',
};

function baseType(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

function extensionOf(filename: string): string {
  const name = filename.split(/[\\/]/).pop() ?? '';
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
}

function kindOfType(type: string): RagFileKind | null {
  const known = BY_TYPE[type];
  if (known) return known;
  if (type.endsWith('+json')) return 'json';
  if (type.startsWith('text/') && type !== 'text/rtf') return 'text';
  return null;
}

/**
 * The kind of a file, from its content type, else its extension, else (PDF only) its first bytes; null when it
 * cannot be ingested. Lets a caller refuse a file before queueing it.
 */
export function fileKind(contentType: string, filename: string, bytes?: Uint8Array): RagFileKind | null {
  const byType = kindOfType(baseType(contentType));
  if (byType) return byType;
  const byExtension = BY_EXTENSION[extensionOf(filename)];
  if (byExtension) return byExtension;
  if (bytes && bytes.length >= 5 && Buffer.from(bytes.subarray(0, 5)).toString('latin1') === '%PDF-') return 'pdf';
  return null;
}

function unsupported(contentType: string, filename: string): RagExtractError {
  const type = baseType(contentType);
  const ext = extensionOf(filename);
  const what = type && ext ? `${type} (.${ext})` : type || (ext ? `.${ext}` : 'unknown');
  return new RagExtractError(`Files of type ${what} cannot be ingested; supported: ${SUPPORTED_KINDS_TEXT}`);
}

const NUMBER = new Intl.NumberFormat('en-US');

function tooLong(maxChars: number): RagExtractError {
  return new RagExtractError(
    `The extracted text is longer than the limit of ${NUMBER.format(maxChars)} characters; split the file into smaller documents`,
  );
}

/**
 * The text of a file from an app's storage, normalized (normalizeText). Throws RagExtractError for an
 * unsupported type, a file too large, damaged, encrypted or without text, or a text over the limits. PDF and DOCX
 * are parsed by libraries whose time and memory only the document process's limits bound.
 */
export async function extractText(bytes: Buffer, contentType: string, filename: string, options: ExtractOptions = {}): Promise<string> {
  const maxChars = options.maxChars ?? MAX_EXTRACTED_CHARS;
  const maxBytes = options.maxBytes ?? MAX_FILE_BYTES;
  const kind = fileKind(contentType, filename, bytes);
  if (!kind) throw unsupported(contentType, filename);
  if (bytes.length > maxBytes) {
    throw new RagExtractError(`The file has ${NUMBER.format(bytes.length)} bytes; files of at most ${NUMBER.format(maxBytes)} bytes can be ingested`);
  }
  let raw: string;
  switch (kind) {
    case 'text':
    case 'markdown':
      raw = decodeText(bytes, kind);
      break;
    case 'html':
      raw = htmlToText(decodeText(bytes, kind));
      break;
    case 'json':
      raw = jsonToText(decodeText(bytes, kind), maxChars);
      break;
    case 'pdf':
      raw = await pdfText(bytes, maxChars, options.maxPdfPages ?? MAX_PDF_PAGES);
      break;
    case 'docx':
      raw = await docxText(bytes, maxChars);
      break;
  }
  const text = normalizeText(raw);
  if (text.length === 0) {
    throw new RagExtractError(
      kind === 'pdf' ? 'The file contains no text (a scanned PDF holds only images, and OCR is not supported)' : 'The file contains no text',
    );
  }
  if (text.length > maxChars) throw tooLong(maxChars);
  return text;
}

const KIND_LABEL: Record<RagFileKind, string> = { text: 'text', markdown: 'Markdown', html: 'HTML', pdf: 'PDF', docx: 'DOCX', json: 'JSON' };

function decodeText(bytes: Uint8Array, kind: RagFileKind): string {
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes);
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes);
  if (bytes.subarray(0, 8192).includes(0)) {
    throw new RagExtractError(`The file is declared as ${KIND_LABEL[kind]} but its content is binary, not text`);
  }
  return new TextDecoder('utf-8').decode(bytes); // replaces invalid bytes with U+FFFD; drops a UTF-8 BOM
}

function jsonToText(source: string, maxChars: number): string {
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch (err) {
    throw new RagExtractError(`The JSON could not be parsed: ${errorText(err)}`);
  }
  return prettyJson(value, maxChars);
}

const INDENTS = Array.from({ length: JSON_MAX_INDENT_LEVELS + 1 }, (_, depth) => '  '.repeat(depth));

function indent(depth: number): string {
  return INDENTS[Math.min(depth, JSON_MAX_INDENT_LEVELS)]!;
}

/**
 * A text written in parts that stops with RagExtractError once it passes twice maxChars (the caller checks the
 * normalized length exactly).
 */
class BoundedText {
  readonly #parts: string[] = [];
  #length = 0;
  readonly #maxChars: number;

  constructor(maxChars: number) {
    this.#maxChars = maxChars;
  }

  write(s: string): void {
    this.#length += s.length;
    if (this.#length > this.#maxChars * 2) throw tooLong(this.#maxChars);
    this.#parts.push(s);
  }

  text(): string {
    return this.#parts.join('');
  }
}

/** An array or object being written: its values, its keys (null for an array), the next entry, its depth. */
interface JsonFrame {
  values: readonly unknown[];
  keys: readonly string[] | null;
  next: number;
  depth: number;
}

/**
 * JSON.stringify(value, null, 2) for a value from JSON.parse, except that nesting deeper than
 * JSON_MAX_INDENT_LEVELS is indented no further. Iterative (any depth) and linear in the output, which stops at
 * twice maxChars.
 */
function prettyJson(root: unknown, maxChars: number): string {
  const out = new BoundedText(maxChars);
  const stack: JsonFrame[] = [];
  openJson(root, 0, out, stack);
  for (let frame = stack.at(-1); frame; frame = stack.at(-1)) {
    if (frame.next < frame.values.length) {
      const i = frame.next++;
      const key = frame.keys ? `${JSON.stringify(frame.keys[i])}: ` : '';
      out.write(`${i === 0 ? '\n' : ',\n'}${indent(frame.depth + 1)}${key}`);
      openJson(frame.values[i], frame.depth + 1, out, stack);
    } else {
      stack.pop();
      out.write(`\n${indent(frame.depth)}${frame.keys ? '}' : ']'}`);
    }
  }
  return out.text();
}

/** Writes a primitive or an empty container whole; opens any other container (a frame for prettyJson's loop). */
function openJson(value: unknown, depth: number, out: BoundedText, stack: JsonFrame[]): void {
  if (value === null || typeof value !== 'object') {
    out.write(JSON.stringify(value));
    return;
  }
  const keys = Array.isArray(value) ? null : Object.keys(value);
  const values = keys ? Object.values(value) : (value as unknown[]);
  if (values.length === 0) {
    out.write(keys ? '{}' : '[]');
    return;
  }
  out.write(keys ? '{' : '[');
  stack.push({ values, keys, next: 0, depth });
}

/** Elements whose content is not visible text. */
const SKIPPED = new Set(['head', 'script', 'style', 'noscript', 'template', 'svg', 'math', 'canvas', 'iframe', 'object', 'embed', 'select', 'datalist']);
/** Block elements that make a paragraph break (a blank line) before and after. */
const PARAGRAPH_BLOCKS = new Set([
  'p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'pre', 'ul', 'ol', 'dl', 'table', 'section', 'article', 'header',
  'footer', 'nav', 'aside', 'main', 'figure', 'hr', 'address', 'details', 'fieldset', 'form', 'body',
]);
/** Block elements that make a line break before and after. */
const LINE_BLOCKS = new Set(['div', 'li', 'dt', 'dd', 'tr', 'caption', 'figcaption', 'summary', 'legend', 'option', 'center', 'thead', 'tbody', 'tfoot']);

/**
 * The visible text of an HTML document (see the header of this file). Linear in the input, except in deep
 * nesting: htmlparser2 keeps the open elements in an array it shifts and searches, so markup nested N deep costs
 * up to N squared (the document process's time limit bounds it).
 */
export function htmlToText(html: string): string {
  const out: string[] = [];
  let pendingBreak = 0; // newlines owed before the next text: 1 line break, 2 paragraph break
  let pendingMarker = ''; // a list item's "- ", written before its first text
  let wroteAny = false;
  const skip: boolean[] = []; // per open element: is its content invisible?
  let pre = 0;
  const cells: number[] = []; // per open table row: cells seen

  const breakAtLeast = (n: number) => {
    if (wroteAny && n > pendingBreak) pendingBreak = n;
  };
  const write = (s: string) => {
    if (pendingBreak > 0) {
      out.push(pendingBreak >= 2 ? '\n\n' : '\n');
      pendingBreak = 0;
    }
    if (pendingMarker) {
      out.push(pendingMarker);
      pendingMarker = '';
    }
    out.push(s);
    wroteAny = true;
  };

  const parser = new Parser(
    {
      onopentag(name, attribs) {
        const hidden = skip.at(-1) === true || SKIPPED.has(name) || attribs['hidden'] !== undefined;
        skip.push(hidden);
        if (hidden) return;
        if (name === 'pre') pre++;
        if (PARAGRAPH_BLOCKS.has(name)) breakAtLeast(2);
        else if (LINE_BLOCKS.has(name)) breakAtLeast(1);
        if (name === 'li') pendingMarker = '- ';
        else if (name === 'tr') cells.push(0);
        else if (name === 'td' || name === 'th') {
          const seen = cells.at(-1);
          if (seen === undefined) {
            if (wroteAny) write(' '); // a cell outside a row: keep the words apart
          } else {
            if (seen > 0) write(' | ');
            cells[cells.length - 1] = seen + 1;
          }
        } else if (name === 'br') {
          if (pendingBreak < 2) {
            pendingBreak++;
            if (!wroteAny) pendingBreak = 0;
          }
        }
      },
      onclosetag(name) {
        const hidden = skip.pop() ?? false;
        if (hidden) return;
        if (name === 'pre' && pre > 0) pre--;
        if (name === 'tr') cells.pop();
        if (PARAGRAPH_BLOCKS.has(name)) breakAtLeast(2);
        else if (LINE_BLOCKS.has(name)) breakAtLeast(1);
      },
      ontext(data) {
        if (skip.at(-1) === true) return;
        if (pre > 0) {
          if (data.length > 0) write(data);
          return;
        }
        // HTML collapses white space; none at the start of a line or after a space already written.
        let text = data.replace(/[ \t\n\r\f]+/g, ' ');
        if (!wroteAny || pendingBreak > 0 || out.at(-1)?.endsWith(' ')) text = text.replace(/^ /, '');
        if (text.length > 0) write(text);
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  return out.join('');
}

// --- PDF and DOCX ---------------------------------------------------------------------------------------------

interface PdfTextItem {
  str?: string;
  hasEOL?: boolean;
}

async function pdfText(bytes: Uint8Array, maxChars: number, maxPages: number): Promise<string> {
  const { getDocumentProxy } = await import('unpdf');
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // PDF.js refuses a Buffer: a plain view of the same bytes.
    pdf = await getDocumentProxy(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), {
      isEvalSupported: false, // never compile font programs to JS
      useSystemFonts: false,
      disableFontFace: true,
      verbosity: 0,
    });
  } catch (err) {
    throw new RagExtractError(`The PDF could not be read (it is damaged or encrypted): ${errorText(err)}`);
  }
  try {
    if (pdf.numPages > maxPages) {
      throw new RagExtractError(`The PDF has ${NUMBER.format(pdf.numPages)} pages; at most ${NUMBER.format(maxPages)} pages can be ingested`);
    }
    const pages: string[] = [];
    let length = 0;
    for (let p = 1; p <= pdf.numPages; p++) {
      let page: string;
      try {
        const proxy = await pdf.getPage(p);
        const content = await proxy.getTextContent();
        page = (content.items as PdfTextItem[]).map((item) => (item.str ?? '') + (item.hasEOL ? '\n' : '')).join('');
        proxy.cleanup();
      } catch (err) {
        throw new RagExtractError(`The PDF could not be read (page ${p} is damaged): ${errorText(err)}`);
      }
      page = normalizeText(page);
      if (page.length === 0) continue;
      length += page.length + 2;
      if (length > maxChars + 2) throw tooLong(maxChars);
      pages.push(page);
    }
    return pages.join('\n\n');
  } finally {
    await pdf.destroy().catch(() => {});
  }
}

async function docxText(bytes: Uint8Array, maxChars: number): Promise<string> {
  const { default: mammoth } = await import('mammoth');
  let value: string;
  try {
    ({ value } = await mammoth.extractRawText({ buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) }));
  } catch (err) {
    throw new RagExtractError(`The DOCX could not be read (it is damaged or not a Word document): ${errorText(err)}`);
  }
  if (value.length > maxChars * 2) throw tooLong(maxChars); // the caller checks the normalized length exactly
  return value;
}

/** An error's message on one line, at most 300 characters (for an errorMessage). */
export function errorText(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/\s+/g, ' ').trim().slice(0, 300) || 'unknown error';
}
