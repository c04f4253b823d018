import { existsSync, mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { entrySegments, extractZip, findSiteRoot, RATIO_FLOOR_BYTES, ZipRejected, type ExtractLimits } from '../../src/frontend/extract.ts';
import { declareSize, renameEntry, zipOf, type ZipEntries, type ZipOptions } from '../integration/frontend-helpers.ts';

const LIMITS: ExtractLimits = { maxUnzippedBytes: 8 * 1024 * 1024, maxFiles: 50, maxCompressionRatio: 100 };

let work: string;
let dest: string;
beforeEach(() => {
  work = mkdtempSync(path.join(tmpdir(), 'svc-extract-'));
  dest = path.join(work, 'deployment', 'build');
  mkdirSync(dest, { recursive: true });
});
afterEach(() => {
  rmSync(work, { recursive: true, force: true });
});

async function extract(zip: Buffer, limits: ExtractLimits = LIMITS) {
  const file = path.join(work, 'upload.zip');
  writeFileSync(file, zip);
  return extractZip(file, dest, limits);
}

async function extractEntries(entries: ZipEntries, opts?: ZipOptions, limits?: ExtractLimits) {
  return extract(await zipOf(entries, opts), limits);
}

/** Every file under the work folder except the zip itself. */
function written(): string[] {
  return readdirSync(work, { recursive: true, withFileTypes: true })
    .filter((e) => !e.isDirectory())
    .map((e) => path.relative(work, path.join(e.parentPath, e.name)))
    .filter((f) => f !== 'upload.zip')
    .sort();
}

describe('entrySegments', () => {
  it('accepts relative names and drops empty and . segments', () => {
    expect(entrySegments('index.html')).toEqual(['index.html']);
    expect(entrySegments('assets/./js//app.js')).toEqual(['assets', 'js', 'app.js']);
    expect(entrySegments('dist/')).toEqual(['dist']);
  });

  it.each([
    ['../evil.txt', /path traversal/],
    ['a/../../evil.txt', /path traversal/],
    ['a\\..\\..\\evil.txt', /path traversal/],
    ['/etc/passwd', /absolute path/],
    ['\\etc\\passwd', /absolute path/],
    ['C:/Windows/evil.txt', /absolute path/],
    ['c:evil.txt', /absolute path/],
    ['a\0b', /NUL/],
    ['./', /empty name/],
    ['x'.repeat(256), /longer than 255/],
  ])('refuses %j', (name, message) => {
    expect(() => entrySegments(name)).toThrow(ZipRejected);
    expect(() => entrySegments(name)).toThrow(message);
  });
});

describe('extractZip', () => {
  it('extracts files and folders and counts the real bytes', async () => {
    const result = await extractEntries({ 'index.html': '<p>hi</p>', 'assets/': '', 'assets/app.js': 'x'.repeat(1000), 'a/b/c.txt': 'deep' });
    expect(result).toEqual({ files: 3, bytes: 9 + 1000 + 4 });
    expect(readFileSync(path.join(dest, 'a/b/c.txt'), 'utf8')).toBe('deep');
    expect(written()).toEqual(['deployment/build/a/b/c.txt', 'deployment/build/assets/app.js', 'deployment/build/index.html']);
  });

  it('skips macOS resource forks', async () => {
    const result = await extractEntries({ 'index.html': 'x', '__MACOSX/._index.html': 'junk' });
    expect(result.files).toBe(1);
    expect(existsSync(path.join(dest, '__MACOSX'))).toBe(false);
  });

  it('refuses ../ traversal (forged past yazl) and writes nothing outside', async () => {
    const zip = renameEntry(await zipOf({ 'index.html': 'x', 'QQ/QQ/evil.txt': 'pwned' }), 'QQ/QQ/evil.txt', '../../evil.txt');
    await expect(extract(zip)).rejects.toThrow(/leaves the site folder: '\.\.\/\.\.\/evil\.txt'/);
    expect(written().filter((f) => f.includes('evil'))).toEqual([]);
    expect(existsSync(path.join(work, 'evil.txt'))).toBe(false);
  });

  it('refuses absolute paths', async () => {
    const target = path.join(work, 'abs-evil.txt');
    const placeholder = 'Z' + target.slice(1);
    const zip = renameEntry(await zipOf({ [placeholder]: 'pwned' }), placeholder, target);
    await expect(extract(zip)).rejects.toThrow(/absolute path/);
    expect(existsSync(target)).toBe(false);
  });

  it('refuses symbolic links and other special files', async () => {
    await expect(extractEntries({ 'index.html': 'x', link: '/etc/passwd' }, { modes: { link: 0o120777 } })).rejects.toThrow(/symbolic link: 'link'/);
    expect(existsSync(path.join(dest, 'link'))).toBe(false);
    await expect(extractEntries({ fifo: '' }, { modes: { fifo: 0o010644 } })).rejects.toThrow(/special file/);
  });

  it('refuses a bomb over the uncompressed cap from its header, before writing it', async () => {
    const limits = { ...LIMITS, maxUnzippedBytes: 1024 * 1024 };
    await expect(extractEntries({ 'zeros.bin': Buffer.alloc(4 * 1024 * 1024) }, {}, limits)).rejects.toThrow(/expands to more than 1048576 bytes/);
    expect(existsSync(path.join(dest, 'zeros.bin'))).toBe(false);
  });

  it('counts the bytes actually inflated when a header lies about the size', async () => {
    const limits = { ...LIMITS, maxUnzippedBytes: 64 * 1024 };
    const zip = declareSize(await zipOf({ 'zeros.bin': Buffer.alloc(4 * 1024 * 1024) }), 'zeros.bin', 10);
    const err = await extract(zip, limits).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ZipRejected);
    expect((err as Error).message).toMatch(/does not match its header|expands to more than/);
    // Stopped early: far less than the real 4 MB reached the disk (the caller then removes the whole folder).
    const partial = path.join(dest, 'zeros.bin');
    if (existsSync(partial)) expect(statSync(partial).size).toBeLessThanOrEqual(64 * 1024);
  });

  it('refuses a large entry over the compression ratio; small compressible files are fine', async () => {
    await expect(extractEntries({ 'zeros.bin': Buffer.alloc(RATIO_FLOOR_BYTES * 2) })).rejects.toThrow(/expands more than 100:1/);
    const ok = await extractEntries({ 'spaces.txt': ' '.repeat(RATIO_FLOOR_BYTES) });
    expect(ok.bytes).toBe(RATIO_FLOOR_BYTES);
  });

  it('refuses more entries than maxFiles, folders included', async () => {
    const limits = { ...LIMITS, maxFiles: 3 };
    await expect(extractEntries({ a: '1', b: '2', c: '3', d: '4' }, {}, limits)).rejects.toThrow(/4 entries; at most 3/);
    await expect(extractEntries({ 'x/': '', 'y/': '', a: '1', b: '2' }, {}, limits)).rejects.toThrow(/at most 3/);
    expect((await extractEntries({ a: '1', b: '2', c: '3' }, {}, limits)).files).toBe(3);
  });

  it('refuses duplicate paths instead of overwriting', async () => {
    const zip = renameEntry(await zipOf({ 'index.html': 'first', 'indeX.html': 'second' }), 'indeX.html', 'index.html');
    await expect(extract(zip)).rejects.toThrow(/same path twice/);
  });

  it('refuses corrupt and non-zip files with a readable message', async () => {
    const good = await zipOf({ 'index.html': 'x' });
    await expect(extract(good.subarray(0, good.length - 10))).rejects.toThrow(/not a readable zip archive/);
    await expect(extract(Buffer.from('hello, not a zip'))).rejects.toThrow(/not a readable zip archive/);
    const flipped = Buffer.from(good);
    flipped[40] = flipped[40]! ^ 0xff; // inside the compressed data
    await expect(extract(flipped)).rejects.toThrow(ZipRejected);
  });
});

describe('findSiteRoot', () => {
  it('uses the root when it has index.html', async () => {
    await extractEntries({ 'index.html': 'x', 'dist/index.html': 'y' });
    expect(await findSiteRoot(dest)).toBe(dest);
  });

  it('strips a single top-level folder that holds index.html', async () => {
    await extractEntries({ 'dist/index.html': 'x', 'dist/assets/a.js': 'y', '__MACOSX/._dist': 'z' });
    expect(await findSiteRoot(dest)).toBe(path.join(dest, 'dist'));
  });

  it('refuses a tree without index.html where it belongs', async () => {
    await extractEntries({ 'dist/index.html': 'x', 'other/index.html': 'y' });
    await expect(findSiteRoot(dest)).rejects.toThrow(/no index\.html/);
    rmSync(dest, { recursive: true });
    mkdirSync(dest);
    await extractEntries({ 'a/b/index.html': 'x' });
    await expect(findSiteRoot(dest)).rejects.toThrow(ZipRejected);
  });
});
