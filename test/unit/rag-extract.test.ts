import { describe, expect, it } from 'vitest';
import {
  JSON_MAX_INDENT_LEVELS,
  MAX_EXTRACTED_CHARS,
  MAX_FILE_BYTES,
  MAX_PDF_PAGES,
  RagExtractError,
  extractText,
  fileKind,
  htmlToText,
} from '../../src/rag/extract.ts';
import { makeDocx, makePdf, zip } from '../helpers/documents.ts';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

async function failure(p: Promise<unknown>): Promise<RagExtractError> {
  const err = await p.then(
    () => {
      throw new Error('expected a RagExtractError');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RagExtractError);
  return err as RagExtractError;
}

describe('limits', () => {
  it('are exported', () => {
    expect(MAX_FILE_BYTES).toBe(10 * 1024 * 1024);
    expect(MAX_EXTRACTED_CHARS).toBe(5_000_000);
    expect(MAX_PDF_PAGES).toBe(2_000);
    expect(JSON_MAX_INDENT_LEVELS).toBe(16);
  });
});

describe('fileKind', () => {
  it('takes the content type first, the extension next, the PDF signature last', () => {
    expect(fileKind('text/plain; charset=utf-8', 'x.pdf')).toBe('text');
    expect(fileKind('TEXT/MARKDOWN', 'notes')).toBe('markdown');
    expect(fileKind('text/csv', 'a.csv')).toBe('text');
    expect(fileKind('application/ld+json', 'a')).toBe('json');
    expect(fileKind(DOCX, 'a')).toBe('docx');
    expect(fileKind('application/octet-stream', 'README.MD')).toBe('markdown');
    expect(fileKind('', 'page.htm')).toBe('html');
    expect(fileKind('application/octet-stream', 'scan', Buffer.from('%PDF-1.7\n'))).toBe('pdf');
    expect(fileKind('image/png', 'a.png')).toBeNull();
    expect(fileKind('text/rtf', 'a.rtf')).toBeNull();
    expect(fileKind('application/msword', 'old.doc')).toBeNull();
  });
});

describe('text and Markdown', () => {
  it('plain text: UTF-8, whitespace normalized', async () => {
    const text = await extractText(Buffer.from('\uFEFFHello  world.\r\nSecond line.   \r\n\r\n\r\n\r\nNew paragraph.\n'), 'text/plain', 'a.txt');
    expect(text).toBe('Hello world.\nSecond line.\n\nNew paragraph.');
  });

  it('by extension when the type says nothing', async () => {
    expect(await extractText(Buffer.from('plain'), 'application/octet-stream', 'notes.text')).toBe('plain');
  });

  it('invalid UTF-8 becomes U+FFFD', async () => {
    expect(await extractText(Buffer.from([0x61, 0xff, 0x62]), 'text/plain', 'a.txt')).toBe('a\uFFFDb');
  });

  it('UTF-16 with a byte order mark', async () => {
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Grüße', 'utf16le')]);
    expect(await extractText(le, 'text/plain', 'a.txt')).toBe('Grüße');
  });

  it('binary content declared as text fails', async () => {
    const err = await failure(extractText(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1]), 'text/plain', 'a.txt'));
    expect(err.message).toBe('The file is declared as text but its content is binary, not text');
  });

  it('Markdown is kept as it is', async () => {
    const md = '# Title\n\nSome *emphasis* and `code`.\n\n```ts\nconst  x = 1;\n    indented();\n```\n';
    expect(await extractText(Buffer.from(md), 'text/markdown', 'a.md')).toBe(
      '# Title\n\nSome *emphasis* and `code`.\n\n```ts\nconst x = 1;\n    indented();\n```',
    );
  });
});

describe('HTML', () => {
  const page = `<!doctype html><html><head><title>Ignored title</title><style>p { color: red }</style>
    <script>var hidden = "script text";</script></head>
    <body><nav><a href="/">Home</a> <a href="/docs">Docs</a></nav>
    <h1>Main   heading</h1>
    <p>First paragraph with <b>bold</b> &amp; <i>italic</i> text.<br>After a break.</p>
    <div>A div</div><div>Another div</div>
    <ul><li>One</li><li>Two <em>items</em></li></ul>
    <table><tr><th>Name</th><th>Age</th></tr><tr><td>Ada</td><td>36</td></tr></table>
    <div hidden>Hidden text</div><noscript>Enable JS</noscript><template><p>tpl</p></template>
    <pre>  code line
    indented</pre>
    <p>Caf&eacute; &lt;tag&gt; &#x263A;</p></body></html>`;

  it('visible text, blocks as line breaks, scripts and styles dropped', async () => {
    expect(await extractText(Buffer.from(page), 'text/html; charset=utf-8', 'page.html')).toBe(
      [
        'Home Docs',
        '',
        'Main heading',
        '',
        'First paragraph with bold & italic text.',
        'After a break.',
        '',
        'A div',
        'Another div',
        '',
        '- One',
        '- Two items',
        '',
        'Name | Age',
        'Ada | 36',
        '',
        '  code line',
        '    indented',
        '',
        'Café <tag> ☺',
      ].join('\n'),
    );
  });

  it('unclosed tags are fine', () => {
    expect(htmlToText('<p>one<p>two<li>three')).toBe('one\n\ntwo\n- three');
    expect(htmlToText('a<b>b</b>c <i> d </i>\n e<br><br><br>f')).toBe('abc d e\n\nf');
  });

  it('a page of scripts only has no text', async () => {
    const err = await failure(extractText(Buffer.from('<html><script>alert(1)</script></html>'), '', 'x.htm'));
    expect(err.message).toBe('The file contains no text');
  });
});

describe('JSON', () => {
  it('is parsed and pretty-printed', async () => {
    const text = await extractText(Buffer.from('{"name":"Ada","tags":["math","engines"],"born":1815}'), 'application/json', 'a.json');
    expect(text).toBe('{\n  "name": "Ada",\n  "tags": [\n    "math",\n    "engines"\n  ],\n  "born": 1815\n}');
  });

  it('is exactly JSON.stringify(value, null, 2) up to JSON_MAX_INDENT_LEVELS deep', async () => {
    let value: unknown = { leaf: [1, 'two', null, true, {}, []], 'key "quoted"': 'line\nbreak' };
    for (let depth = 1; depth <= JSON_MAX_INDENT_LEVELS - 2; depth++) value = depth % 2 ? [value, depth] : { [`level${depth}`]: value, n: -depth / 3 };
    const json = JSON.stringify(value); // the leaf's items end JSON_MAX_INDENT_LEVELS deep
    expect(await extractText(Buffer.from(json), 'application/json', 'a.json')).toBe(JSON.stringify(value, null, 2));
  });

  it('indents deeper nesting no further: 6 KB of brackets makes a small text, fast (it made 9 MB in 15 s)', async () => {
    const t0 = performance.now();
    const text = await extractText(Buffer.from('['.repeat(3000) + ']'.repeat(3000)), 'application/json', 'deep.json');
    expect(performance.now() - t0).toBeLessThan(1000);
    const lines = text.split('\n');
    expect(lines).toHaveLength(2 * 3000 - 1); // "[" ... "[]" ... "]"
    expect(lines[1]).toBe('  [');
    expect(lines[1000]).toBe(`${'  '.repeat(JSON_MAX_INDENT_LEVELS)}[`);
    expect(lines[2999]).toBe(`${'  '.repeat(JSON_MAX_INDENT_LEVELS)}[]`);
    expect(lines.at(-1)).toBe(']');
    expect(Math.max(...lines.map((l) => l.length))).toBe(2 * JSON_MAX_INDENT_LEVELS + 2);
  });

  it('stops once the text passes the limit, at any depth', async () => {
    const deep = Buffer.from('['.repeat(200_000) + ']'.repeat(200_000));
    const err = await failure(extractText(deep, 'application/json', 'deep.json', { maxChars: 1_000_000 }));
    expect(err.message).toBe('The extracted text is longer than the limit of 1,000,000 characters; split the file into smaller documents');
    const wide = Buffer.from(JSON.stringify({ items: Array.from({ length: 100_000 }, (_, i) => ({ id: i })) }));
    expect((await failure(extractText(wide, 'application/json', 'wide.json', { maxChars: 1_000_000 }))).message).toBe(
      'The extracted text is longer than the limit of 1,000,000 characters; split the file into smaller documents',
    );
  });

  it('invalid JSON fails with the parser message', async () => {
    const err = await failure(extractText(Buffer.from('{"a": '), 'application/octet-stream', 'data.json'));
    expect(err.message).toMatch(/^The JSON could not be parsed: .+/);
  });
});

describe('PDF', () => {
  it('extracts the text of every page', async () => {
    const pdf = makePdf([['Hello PDF world.', 'Second line (here).'], ['Page two text.']]);
    expect(await extractText(pdf, 'application/pdf', 'doc.pdf')).toBe('Hello PDF world.\nSecond line (here).\n\nPage two text.');
  });

  it('is recognized by its signature when the type and name say nothing', async () => {
    expect(await extractText(makePdf([['Sniffed.']]), 'application/octet-stream', 'upload')).toBe('Sniffed.');
  });

  it('a corrupt PDF fails with the library message', async () => {
    const err = await failure(extractText(Buffer.from('%PDF-1.4\nthis is not really a PDF\n'), 'application/pdf', 'bad.pdf'));
    expect(err.message).toBe('The PDF could not be read (it is damaged or encrypted): Invalid PDF structure.');
  });

  it('a truncated PDF fails the same way', async () => {
    const err = await failure(extractText(makePdf([['x']]).subarray(0, 120), 'application/pdf', 'cut.pdf'));
    expect(err.message).toBe('The PDF could not be read (it is damaged or encrypted): Invalid PDF structure.');
  });

  it('a PDF without text fails clearly', async () => {
    const err = await failure(extractText(makePdf([[]]), 'application/pdf', 'scan.pdf'));
    expect(err.message).toBe('The file contains no text (a scanned PDF holds only images, and OCR is not supported)');
  });

  it('bounds the pages and the text', async () => {
    const pdf = makePdf([['one'], ['two'], ['three']]);
    expect((await failure(extractText(pdf, 'application/pdf', 'a.pdf', { maxPdfPages: 2 }))).message).toBe(
      'The PDF has 3 pages; at most 2 pages can be ingested',
    );
    expect((await failure(extractText(pdf, 'application/pdf', 'a.pdf', { maxChars: 5 }))).message).toBe(
      'The extracted text is longer than the limit of 5 characters; split the file into smaller documents',
    );
  });
});

describe('DOCX', () => {
  it('extracts the paragraphs', async () => {
    const docx = await makeDocx(['Hello DOCX.', 'Second paragraph & more.']);
    expect(await extractText(docx, DOCX, 'report.docx')).toBe('Hello DOCX.\n\nSecond paragraph & more.');
    expect(await extractText(docx, 'application/octet-stream', 'report.DOCX')).toBe('Hello DOCX.\n\nSecond paragraph & more.');
  });

  it('a zip that is not a Word document fails', async () => {
    const err = await failure(extractText(await zip({ 'a.txt': 'hi' }), DOCX, 'a.docx'));
    expect(err.message).toMatch(/^The DOCX could not be read \(it is damaged or not a Word document\): .+/);
  });

  it('bytes that are not a zip fail', async () => {
    const err = await failure(extractText(Buffer.from('not a zip at all'), DOCX, 'a.docx'));
    expect(err.message).toMatch(/^The DOCX could not be read \(it is damaged or not a Word document\): Can't find end of central directory/);
  });
});

describe('refusals', () => {
  it('an unsupported type names the type and the supported ones', async () => {
    const err = await failure(extractText(Buffer.from([0x89, 0x50, 0x4e, 0x47]), 'image/png', 'photo.png'));
    expect(err.message).toBe('Files of type image/png (.png) cannot be ingested; supported: text, Markdown, HTML, PDF, DOCX, JSON');
    const bare = await failure(extractText(Buffer.from('x'), 'image/png', ''));
    expect(bare.message).toBe('Files of type image/png cannot be ingested; supported: text, Markdown, HTML, PDF, DOCX, JSON');
    const unknown = await failure(extractText(Buffer.from('x'), '', 'blob'));
    expect(unknown.message).toBe('Files of type unknown cannot be ingested; supported: text, Markdown, HTML, PDF, DOCX, JSON');
  });

  it('empty text fails', async () => {
    expect((await failure(extractText(Buffer.alloc(0), 'text/plain', 'empty.txt'))).message).toBe('The file contains no text');
    expect((await failure(extractText(Buffer.from(' \n\n\t \r\n'), 'text/markdown', 'blank.md'))).message).toBe('The file contains no text');
  });

  it('a file over the size limit fails before parsing', async () => {
    const err = await failure(extractText(Buffer.alloc(11), 'text/plain', 'a.txt', { maxBytes: 10 }));
    expect(err.message).toBe('The file has 11 bytes; files of at most 10 bytes can be ingested');
  });

  it('text over maxChars fails', async () => {
    const err = await failure(extractText(Buffer.from('x'.repeat(1001)), 'text/plain', 'a.txt', { maxChars: 1000 }));
    expect(err.message).toBe('The extracted text is longer than the limit of 1,000 characters; split the file into smaller documents');
  });
});
