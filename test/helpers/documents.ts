// Small real documents for RAG tests: a PDF with text pages and a DOCX with paragraphs, built byte by byte; a DOCX
// zip bomb; and the event loop's longest delay while some work runs.
import { Readable } from 'node:stream';
import { ZipFile } from 'yazl';

/** A real PDF 1.4 file: one Helvetica text line per entry, one page per array, a correct xref table. */
export function makePdf(pages: string[][]): Buffer {
  const objects: string[] = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${pages.map((_, i) => `${4 + i * 2} 0 R`).join(' ')}] /Count ${pages.length} >>`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
  ];
  pages.forEach((lines, i) => {
    const ops = ['BT', '/F1 12 Tf', '14 TL', '72 720 Td', ...lines.map((l) => `(${l.replace(/[\\()]/g, (c) => `\\${c}`)}) Tj T*`), 'ET'];
    const stream = ops.join('\n');
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + i * 2} 0 R >>`);
    objects.push(`<< /Length ${Buffer.byteLength(stream, 'latin1')} >>\nstream\n${stream}\nendstream`);
  });
  let pdf = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(pdf, 'latin1'));
    pdf += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(pdf, 'latin1');
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(pdf, 'latin1');
}

export function zip(entries: Record<string, string | Readable>): Promise<Buffer> {
  const z = new ZipFile();
  for (const [name, content] of Object.entries(entries)) {
    if (typeof content === 'string') z.addBuffer(Buffer.from(content, 'utf8'), name);
    else z.addReadStream(content, name);
  }
  z.end();
  const parts: Buffer[] = [];
  return new Promise((resolve, reject) => {
    z.outputStream.on('data', (b: Buffer) => parts.push(b));
    z.outputStream.on('end', () => resolve(Buffer.concat(parts)));
    z.outputStream.on('error', reject);
  });
}

/** The minimal OOXML parts of a DOCX around the main document's XML. */
function docxParts(documentXml: string | Readable): Record<string, string | Readable> {
  return {
    '[Content_Types].xml':
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
      '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
      '<Default Extension="xml" ContentType="application/xml"/>' +
      '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>' +
      '</Types>',
    '_rels/.rels':
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
      '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>' +
      '</Relationships>',
    'word/document.xml': documentXml,
  };
}

const DOCUMENT_XML_HEAD =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>';
const DOCUMENT_XML_TAIL = '</w:body></w:document>';

/** A real DOCX from the minimal OOXML parts: content types, package relationships, the main document. */
export function makeDocx(paragraphs: string[]): Promise<Buffer> {
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const body = paragraphs.map((p) => `<w:p><w:r><w:t xml:space="preserve">${esc(p)}</w:t></w:r></w:p>`).join('');
  return zip(docxParts(DOCUMENT_XML_HEAD + body + DOCUMENT_XML_TAIL));
}

/**
 * A zip bomb dressed as a DOCX: a few hundred KB whose word/document.xml inflates to `inflatedMb` MB of empty
 * paragraphs (a DOM node each once parsed). Streamed into the zip, so building it holds 1 MB at a time.
 */
export function makeDocxBomb(inflatedMb: number): Promise<Buffer> {
  const block = Buffer.from('<w:p/>'.repeat((1024 * 1024) / 8)); // 768 KB
  const blocks = Math.ceil((inflatedMb * 1024 * 1024) / block.length);
  function* xml(): Generator<Buffer> {
    yield Buffer.from(DOCUMENT_XML_HEAD);
    for (let i = 0; i < blocks; i++) yield block;
    yield Buffer.from(DOCUMENT_XML_TAIL);
  }
  return zip(docxParts(Readable.from(xml())));
}

