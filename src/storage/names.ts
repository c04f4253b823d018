// Filenames, MIME types and Content-Disposition: pure functions, unit-tested in test/unit/storage-names.test.ts.

export const MAX_FILENAME_LENGTH = 200;
const FALLBACK_FILENAME = 'file';
const MAX_EXTENSION_LENGTH = 20;

/**
 * A filename safe to show, to put in an object key and in a Content-Disposition header. It is metadata only:
 * nothing on disk is ever named after it. Drops any directory part (both separators), control and format
 * characters (including bidi overrides); keeps letters, marks and digits of any script plus `space . _ - ( ) + , @ =`
 * (anything else becomes `_`); no leading dots (no hidden or `..` names), no trailing dots or spaces; at most
 * 200 characters (the extension is kept when the name is cut); never empty (`file`).
 */
export function sanitizeFilename(raw: string): string {
  let name = raw.normalize('NFC').replace(/\\/g, '/');
  name = name.slice(name.lastIndexOf('/') + 1);
  name = name
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, '')
    .replace(/\s+/gu, ' ')
    .replace(/[^\p{L}\p{M}\p{N} ._\-()+,@=]/gu, '_')
    .replace(/_{2,}/g, '_')
    .replace(/^[. ]+/, '')
    .replace(/(?<![. ])[. ]+$/, '');
  const chars = [...name];
  if (chars.length > MAX_FILENAME_LENGTH) {
    const dot = name.lastIndexOf('.');
    const ext = dot > 0 ? [...name.slice(dot)] : [];
    if (ext.length > 1 && ext.length <= MAX_EXTENSION_LENGTH) {
      name = chars.slice(0, MAX_FILENAME_LENGTH - ext.length).join('').replace(/(?<![. ])[. ]+$/, '') + ext.join('');
    } else {
      name = chars.slice(0, MAX_FILENAME_LENGTH).join('').replace(/(?<![. ])[. ]+$/, '');
    }
  }
  return name || FALLBACK_FILENAME;
}

// RFC 6838 restricted names for type and subtype; parameters as RFC 9110 tokens or quoted strings.
const TOKEN = "[A-Za-z0-9!#$%&'*+.^_`|~-]+";
const NAME = '[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}';
const PARAM = `\\s*;\\s*${TOKEN}=(?:${TOKEN}|"(?:[^"\\\\\\r\\n]|\\\\.)*")`;
const MIME_RE = new RegExp(`^(${NAME})/(${NAME})((?:${PARAM})*)\\s*$`);

/** Whether the value is a MIME type such as `image/png` or `text/plain; charset=utf-8`. */
export function isMimeType(value: string): boolean {
  return value.length <= 255 && MIME_RE.test(value);
}

/** `type/subtype` in lower case, without parameters. */
export function mimeEssence(value: string): string {
  return (value.split(';')[0] ?? '').trim().toLowerCase();
}

/** The comparable form of a Content-Type value: lower case, no blanks around `;` and `=`. */
export function normalizeMime(value: string): string {
  return value
    .trim()
    .toLowerCase()
    .replace(/(?:(?<!\s)\s+)?;\s*/g, ';')
    .replace(/(?:(?<!\s)\s+)?=\s*/g, '=');
}

/** Whether a content type passes an allow-list of exact types and `type/*` wildcards; an empty list allows all. */
export function contentTypeAllowed(contentType: string, allowList: readonly string[]): boolean {
  if (allowList.length === 0) return true;
  const essence = mimeEssence(contentType);
  const major = essence.split('/')[0];
  return allowList.some((entry) => {
    const e = entry.trim().toLowerCase();
    return e === essence || e === '*/*' || (e.endsWith('/*') && e.slice(0, -2) === major);
  });
}

/** Whether every type an allow-list entry admits is also admitted by the list (an empty list admits every type). */
export function allowEntryWithin(entry: string, allowList: readonly string[]): boolean {
  if (allowList.length === 0 || allowList.includes('*/*')) return true;
  return entry.endsWith('/*') ? allowList.includes(entry) : contentTypeAllowed(entry, allowList);
}

/** An allow-list entry: a MIME essence (`image/png`) or a wildcard (`image/*`). */
export const ALLOW_ENTRY_RE = new RegExp(`^(?:${NAME}/(?:${NAME}|\\*)|\\*/\\*)$`);

/** RFC 8187 value-chars: what encodeURIComponent leaves, minus the characters it also leaves that 8187 does not allow. */
function encodeRfc8187(value: string): string {
  return encodeURIComponent(value).replace(/['()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}

/**
 * `attachment; filename="<ascii fallback>"; filename*=UTF-8''<percent-encoded>` (RFC 6266): old clients get
 * an ASCII name, current ones the exact UTF-8 name.
 */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeRfc8187(filename)}`;
}

export type ByteRange = { start: number; end: number };

/**
 * Parses a Range header against a size. `undefined`: no usable range, serve the whole body (absent, not
 * bytes, malformed, or several ranges, which a server may ignore). `'unsatisfiable'`: 416.
 */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  if (!header) return undefined;
  const m = /^\s*bytes\s*=\s*(?:(\d+)\s*)?-\s*(?:(\d+)\s*)?$/i.exec(header);
  if (!m) return undefined;
  const [, a = '', b = ''] = m;
  if (a === '' && b === '') return undefined;
  if (a === '') {
    const suffix = Number(b);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(a);
  const end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
  if (b !== '' && Number(b) < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}
