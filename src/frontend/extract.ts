import { createWriteStream } from 'node:fs';
import { mkdir, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yauzl, { type Entry } from 'yauzl';

/** A zip the platform refuses; the message is shown to the user as the deployment's `error`. */
export class ZipRejected extends Error {}

export interface ExtractLimits {
  /** Total bytes of every file once extracted, counted while streaming. */
  maxUnzippedBytes: number;
  /** Entries (files and folders) in the archive. */
  maxFiles: number;
  /** Uncompressed to compressed size, per entry larger than RATIO_FLOOR_BYTES. */
  maxCompressionRatio: number;
}

export interface ExtractResult {
  files: number;
  bytes: number;
}

/**
 * Entries up to this size are never refused for their ratio: a small text file of repeated characters is
 * harmless, a bomb needs volume. The total cap bounds what many small entries can add up to.
 */
export const RATIO_FLOOR_BYTES = 1024 * 1024;

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;

/** Finder's resource-fork folder: skipped silently, it is never part of a site. */
const IGNORED_PREFIX = '__MACOSX/';

/**
 * The relative path segments of an archive entry, or a refusal. yauzl already refuses absolute paths and
 * `..` segments; this is the second, independent check the platform's safety does not delegate.
 */
export function entrySegments(name: string): string[] {
  if (name.includes('\0')) throw new ZipRejected(`The zip contains a file name with a NUL byte: '${printable(name)}'.`);
  const normalized = name.replace(/\\/g, '/');
  if (normalized.startsWith('/') || /^[a-zA-Z]:/.test(normalized)) {
    throw new ZipRejected(`The zip contains an absolute path: '${printable(name)}'. Entries must be relative to the site root.`);
  }
  const segments = normalized.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) {
    throw new ZipRejected(`The zip contains a path that leaves the site folder: '${printable(name)}' (path traversal).`);
  }
  if (segments.length === 0) throw new ZipRejected(`The zip contains an entry with an empty name.`);
  for (const s of segments) if (Buffer.byteLength(s) > 255) throw new ZipRejected(`The zip contains a file name longer than 255 bytes.`);
  return segments;
}

function printable(name: string): string {
  return name.replace(/[\u0000-\u001f\u007f]/g, '?').slice(0, 200);
}

/** The file type bits a Unix zipper stores in the high half of the external attributes (0 when absent). */
export function entryFileType(entry: Pick<Entry, 'externalFileAttributes'>): number {
  return ((entry.externalFileAttributes >>> 16) & S_IFMT) >>> 0;
}

/**
 * Streams every entry of the zip at `zipPath` into `destDir` (which must exist and be empty), refusing
 * traversal, absolute paths, symbolic links and other special files, encrypted entries, more than maxFiles
 * entries, more than maxUnzippedBytes in total (counted on the decompressed bytes actually written, not on
 * the headers) and entries whose compression ratio exceeds maxCompressionRatio. On any refusal it throws
 * ZipRejected; the caller removes destDir. Nothing is ever written outside destDir.
 */
export async function extractZip(zipPath: string, destDir: string, limits: ExtractLimits): Promise<ExtractResult> {
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.openPromise(zipPath, { lazyEntries: true, validateEntrySizes: true, decodeStrings: true, autoClose: true });
  } catch (err) {
    throw readable(err);
  }
  // eachEntry() rejects on the archive's errors; this keeps a late one from becoming an unhandled 'error' event.
  zip.on('error', () => {});
  const root = path.resolve(destDir);
  let files = 0;
  let entries = 0;
  let bytes = 0;
  try {
    if (zip.entryCount > limits.maxFiles) {
      throw new ZipRejected(`The zip has ${zip.entryCount} entries; at most ${limits.maxFiles} files and folders are allowed (SVC_FRONTEND_MAX_FILES).`);
    }
    for await (const entry of zip.eachEntry()) {
      entries++;
      if (entries > limits.maxFiles) throw new ZipRejected(`The zip has more than ${limits.maxFiles} entries (SVC_FRONTEND_MAX_FILES).`);
      if (entry.fileName.startsWith(IGNORED_PREFIX)) continue;
      const segments = entrySegments(entry.fileName);
      const target = path.join(root, ...segments);
      if (path.relative(root, target).startsWith('..') || path.isAbsolute(path.relative(root, target))) {
        throw new ZipRejected(`The zip contains a path that leaves the site folder: '${printable(entry.fileName)}' (path traversal).`);
      }
      const type = entryFileType(entry);
      const isDir = entry.fileName.endsWith('/');
      if (type === S_IFLNK) {
        throw new ZipRejected(`The zip contains a symbolic link: '${printable(entry.fileName)}'. A site may hold only regular files and folders.`);
      }
      if (type !== 0 && type !== S_IFREG && type !== S_IFDIR) {
        throw new ZipRejected(`The zip contains a special file (device, FIFO or socket): '${printable(entry.fileName)}'.`);
      }
      if (isDir || type === S_IFDIR) {
        await mkdir(target, { recursive: true });
        continue;
      }
      if (entry.isEncrypted()) throw new ZipRejected(`The zip contains an encrypted entry: '${printable(entry.fileName)}'. Upload an unencrypted zip.`);
      if (!entry.canDecodeFileData()) {
        throw new ZipRejected(`The zip uses an unsupported compression method (${entry.compressionMethod}) for '${printable(entry.fileName)}'; use deflate or store.`);
      }
      files++;
      // The headers first (cheap refusals), then the real bytes while they stream.
      if (bytes + entry.uncompressedSize > limits.maxUnzippedBytes) throw tooBig(limits);
      checkRatio(entry.fileName, entry.uncompressedSize, entry.compressedSize, limits);
      await mkdir(path.dirname(target), { recursive: true });
      const stream = await zip.openReadStreamPromise(entry);
      let entryBytes = 0;
      const counter = new Transform({
        transform(chunk: Buffer, _enc, done: TransformCallback) {
          entryBytes += chunk.length;
          bytes += chunk.length;
          if (bytes > limits.maxUnzippedBytes) return done(tooBig(limits));
          try {
            checkRatio(entry.fileName, entryBytes, entry.compressedSize, limits);
          } catch (err) {
            return done(err as Error);
          }
          done(null, chunk);
        },
      });
      // wx: a second entry with the same name (or a file over a folder) is refused, never overwritten.
      await pipeline(stream, counter, createWriteStream(target, { flags: 'wx', mode: 0o644 }));
    }
  } catch (err) {
    throw readable(err);
  } finally {
    zip.close();
  }
  return { files, bytes };
}

function tooBig(limits: ExtractLimits): ZipRejected {
  return new ZipRejected(`The zip expands to more than ${limits.maxUnzippedBytes} bytes (SVC_FRONTEND_MAX_UNZIPPED_BYTES); zip bombs are refused.`);
}

function checkRatio(name: string, uncompressed: number, compressed: number, limits: ExtractLimits): void {
  if (uncompressed <= RATIO_FLOOR_BYTES) return;
  if (uncompressed / Math.max(compressed, 1) > limits.maxCompressionRatio) {
    throw new ZipRejected(
      `The entry '${printable(name)}' expands more than ${limits.maxCompressionRatio}:1 (SVC_FRONTEND_MAX_COMPRESSION_RATIO); zip bombs are refused.`,
    );
  }
}

/** yauzl's and the file system's errors in words a user can act on. */
function readable(err: unknown): Error {
  if (err instanceof ZipRejected) return err;
  const e = err as NodeJS.ErrnoException;
  const message = String(e?.message ?? err);
  if (e?.code === 'EEXIST' || e?.code === 'ENOTDIR' || e?.code === 'EISDIR') {
    return new ZipRejected('The zip contains the same path twice (or a file and a folder with one name).');
  }
  if (e?.code === 'ENOENT' || e?.code === 'ENOSPC' || e?.code === 'EACCES' || e?.code === 'EMFILE') return e;
  let m: RegExpExecArray | null;
  if ((m = /^absolute path: (.*)$/s.exec(message))) return new ZipRejected(`The zip contains an absolute path: '${printable(m[1]!)}'. Entries must be relative to the site root.`);
  if ((m = /^invalid relative path: (.*)$/s.exec(message))) return new ZipRejected(`The zip contains a path that leaves the site folder: '${printable(m[1]!)}' (path traversal).`);
  if ((m = /^invalid characters in fileName: (.*)$/s.exec(message))) return new ZipRejected(`The zip contains an invalid file name: '${printable(m[1]!)}'.`);
  if (/too many bytes in the stream|too few bytes in the stream/.test(message)) {
    return new ZipRejected(`An entry's size does not match its header (${message}); the zip is corrupt or forged.`);
  }
  return new ZipRejected(`The file is not a readable zip archive: ${message}.`);
}

/**
 * Where the site starts inside an extracted tree: the root when it has index.html, otherwise the single
 * top-level folder (e.g. dist/ or build/) when the root holds only that folder and it has index.html.
 */
export async function findSiteRoot(dir: string): Promise<string> {
  if (await isFile(path.join(dir, 'index.html'))) return dir;
  const names = (await readdir(dir)).filter((n) => n !== '__MACOSX' && n !== '.DS_Store');
  if (names.length === 1) {
    const only = path.join(dir, names[0]!);
    if ((await stat(only)).isDirectory() && (await isFile(path.join(only, 'index.html')))) return only;
  }
  throw new ZipRejected(
    'The zip has no index.html at its root (nor inside a single top-level folder such as dist/). Zip the contents of your build output folder.',
  );
}

async function isFile(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isFile();
  } catch {
    return false;
  }
}
