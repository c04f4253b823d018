import { describe, expect, it } from 'vitest';
import {
  ALLOW_ENTRY_RE,
  allowEntryWithin,
  contentDisposition,
  contentTypeAllowed,
  isMimeType,
  MAX_FILENAME_LENGTH,
  mimeEssence,
  normalizeMime,
  parseRange,
  sanitizeFilename,
} from '../../src/storage/names.ts';

describe('sanitizeFilename', () => {
  it.each([
    ['report.pdf', 'report.pdf'],
    ['My Photo (1).JPG', 'My Photo (1).JPG'],
    ['../../etc/passwd', 'passwd'],
    ['..\\..\\windows\\system32\\cmd.exe', 'cmd.exe'],
    ['/abs/path/to/file.txt', 'file.txt'],
    ['dir/', 'file'],
    ['..', 'file'],
    ['.', 'file'],
    ['...', 'file'],
    ['.env', 'env'],
    ['', 'file'],
    ['   ', 'file'],
    ['a\u0000b\u0007c\nd\re\tf.txt', 'abcdef.txt'],
    ['evil\u202Egpj.exe', 'evilgpj.exe'],
    ['zero\u200Bwidth.txt', 'zerowidth.txt'],
    ['<script>alert(1)</script>.html', 'script_.html'],
    ['a<b>c&d$e.html', 'a_b_c_d_e.html'],
    ['a"b\'c;d:e*f?g|h.txt', 'a_b_c_d_e_f_g_h.txt'],
    ['name.  ', 'name'],
    ['multiple    spaces.txt', 'multiple spaces.txt'],
    ['Übersicht – März.pdf', 'Übersicht _ März.pdf'],
    ['日本語のファイル.txt', '日本語のファイル.txt'],
    ['e\u0301cole.txt', 'école.txt'],
  ])('%j -> %j', (raw, expected) => {
    expect(sanitizeFilename(raw)).toBe(expected);
  });

  it('caps the length at 200 characters and keeps the extension', () => {
    const long = sanitizeFilename('a'.repeat(500) + '.jpeg');
    expect([...long]).toHaveLength(MAX_FILENAME_LENGTH);
    expect(long.endsWith('.jpeg')).toBe(true);
    const noExt = sanitizeFilename('b'.repeat(300));
    expect(noExt).toBe('b'.repeat(200));
    const astral = sanitizeFilename('😀'.repeat(300));
    // Emoji are not in the safe set: each becomes "_" and runs collapse.
    expect(astral).toBe('_');
    const cjk = sanitizeFilename('字'.repeat(300) + '.txt');
    expect([...cjk]).toHaveLength(200);
    expect(cjk.endsWith('字.txt')).toBe(true);
  });

  it('never yields a path separator, a leading dot or an empty name', () => {
    for (const raw of ['/', '\\', './', '../..', '.hidden/..', 'a/b\\c/.d', '\u0000', '/.', '%2e%2e%2f']) {
      const s = sanitizeFilename(raw);
      expect(s).not.toMatch(/[\\/]/);
      expect(s.startsWith('.')).toBe(false);
      expect(s.length).toBeGreaterThan(0);
    }
  });
});

describe('MIME types', () => {
  it.each(['image/png', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'text/plain; charset=utf-8', 'multipart/form-data; boundary="a b"', 'Application/JSON'])(
    'accepts %j',
    (v) => expect(isMimeType(v)).toBe(true),
  );

  it.each(['', 'image', 'image/', '/png', 'image/png/x', 'image png', 'text/plain;', 'text/plain; charset', 'a\n/b', 'image/png\r\nX-Evil: 1', 'x'.repeat(200) + '/y'])(
    'refuses %j',
    (v) => expect(isMimeType(v)).toBe(false),
  );

  it('essence and normalised forms', () => {
    expect(mimeEssence('Text/Plain; Charset=UTF-8')).toBe('text/plain');
    expect(normalizeMime('Text/Plain ;  charset = UTF-8')).toBe(normalizeMime('text/plain;charset=utf-8'));
    expect(normalizeMime('text/plain')).not.toBe(normalizeMime('text/html'));
  });

  it('allow-lists with exact types and wildcards; empty allows all', () => {
    expect(contentTypeAllowed('image/png', [])).toBe(true);
    expect(contentTypeAllowed('image/png', ['image/*'])).toBe(true);
    expect(contentTypeAllowed('IMAGE/PNG', ['image/png'])).toBe(true);
    expect(contentTypeAllowed('text/plain; charset=utf-8', ['text/plain'])).toBe(true);
    expect(contentTypeAllowed('application/pdf', ['image/*', 'text/plain'])).toBe(false);
    expect(contentTypeAllowed('imagex/png', ['image/*'])).toBe(false);
    expect(contentTypeAllowed('application/pdf', ['*/*'])).toBe(true);
    expect(ALLOW_ENTRY_RE.test('image/*')).toBe(true);
    expect(ALLOW_ENTRY_RE.test('*/png')).toBe(false);
    expect(ALLOW_ENTRY_RE.test('image/png; charset=x')).toBe(false);
  });
});

describe('allowEntryWithin (an app allow-list may only narrow the platform one)', () => {
  it.each([
    ['video/*', [], true],
    ['*/*', ['*/*'], true],
    ['image/png', ['image/*'], true],
    ['image/png', ['image/png', 'text/plain'], true],
    ['image/*', ['image/*'], true],
    ['image/*', ['image/png'], false],
    ['*/*', ['image/*'], false],
    ['video/mp4', ['image/*', 'application/pdf'], false],
  ])('%s within %j: %s', (entry, list, expected) => {
    expect(allowEntryWithin(entry, list)).toBe(expected);
  });
});

describe('contentDisposition', () => {
  it('gives an ASCII fallback and the exact UTF-8 name (RFC 6266 / 8187)', () => {
    expect(contentDisposition('report.pdf')).toBe(`attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`);
    expect(contentDisposition('März (1).pdf')).toBe(`attachment; filename="M_rz (1).pdf"; filename*=UTF-8''M%C3%A4rz%20%281%29.pdf`);
    expect(contentDisposition("it's.txt")).toBe(`attachment; filename="it's.txt"; filename*=UTF-8''it%27s.txt`);
  });
});

describe('parseRange', () => {
  const size = 100;
  it.each([
    ['bytes=0-9', { start: 0, end: 9 }],
    ['bytes=10-', { start: 10, end: 99 }],
    ['bytes=-10', { start: 90, end: 99 }],
    ['bytes=-1000', { start: 0, end: 99 }],
    ['bytes=90-1000', { start: 90, end: 99 }],
    ['bytes=99-99', { start: 99, end: 99 }],
  ])('%s', (header, expected) => expect(parseRange(header, size)).toEqual(expected));

  it('unsatisfiable ranges', () => {
    expect(parseRange('bytes=100-', size)).toBe('unsatisfiable');
    expect(parseRange('bytes=200-300', size)).toBe('unsatisfiable');
    expect(parseRange('bytes=-0', size)).toBe('unsatisfiable');
  });

  it('ignores what it does not serve: absent, other units, malformed, inverted, multiple ranges', () => {
    for (const h of [undefined, '', 'items=0-1', 'bytes=a-b', 'bytes=5-2', 'bytes=0-1,5-6', 'bytes=-']) expect(parseRange(h, size)).toBeUndefined();
  });
});
