// CSV as RFC 4180 writes it (comma-separated, CRLF lines, a field quoted when it holds a comma, quote or line break,
// quotes doubled), opened safely by spreadsheets: a text starting with = + - @ (a formula to Excel or Sheets) is
// prefixed with ' so it stays text, unless it is a plain number or phone number such as +1 555 0100.
const FORMULA = /^[=+\-@\t\r]/;
const NUMBER_LIKE = /^[+-]?[\d\s().-]+$/;

export function csvField(value: unknown): string {
  let text = value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
  if (FORMULA.test(text) && !NUMBER_LIKE.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) || /^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A header line and one line per row, each ending in CRLF. */
export function toCsv(header: readonly string[], lines: ReadonlyArray<readonly unknown[]>): string {
  return [header, ...lines].map((line) => `${line.map(csvField).join(',')}\r\n`).join('');
}
