// Zip builders and deployment helpers shared by the frontend tests (not a test file: vitest collects *.test.ts only).
import http from 'node:http';
import { ZipFile } from 'yazl';
import type { TestPlatform } from '../helpers/platform.ts';

export type ZipEntries = Record<string, string | Buffer>;

export interface ZipOptions {
  /** Unix mode per entry name (e.g. 0o120777 for a symbolic link). */
  modes?: Record<string, number>;
  /** Store without compression. */
  store?: boolean;
}

/** A zip built in memory with yazl. */
export function zipOf(entries: ZipEntries, opts: ZipOptions = {}): Promise<Buffer> {
  const zip = new ZipFile();
  for (const [name, content] of Object.entries(entries)) {
    if (name.endsWith('/')) {
      zip.addEmptyDirectory(name);
      continue;
    }
    const mode = opts.modes?.[name];
    zip.addBuffer(Buffer.isBuffer(content) ? content : Buffer.from(content), name, {
      compress: !opts.store,
      ...(mode === undefined ? {} : { mode }),
    });
  }
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('error', reject);
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

/**
 * Rewrites every occurrence of an entry name (local header and central directory) with another of the same
 * length: yazl refuses to write hostile names such as ../evil.txt, so tests forge them this way.
 */
export function renameEntry(zip: Buffer, from: string, to: string): Buffer {
  if (Buffer.byteLength(from) !== Buffer.byteLength(to)) throw new Error('names must have the same byte length');
  const out = Buffer.from(zip);
  const needle = Buffer.from(from);
  let at = out.indexOf(needle);
  let count = 0;
  while (at >= 0) {
    Buffer.from(to).copy(out, at);
    count++;
    at = out.indexOf(needle, at + needle.length);
  }
  if (count === 0) throw new Error(`entry ${from} not found`);
  return out;
}

/** Sets the uncompressed size the central directory declares for an entry (a forged, lying header). */
export function declareSize(zip: Buffer, name: string, size: number): Buffer {
  const out = Buffer.from(zip);
  const sig = Buffer.from([0x50, 0x4b, 0x01, 0x02]);
  let at = out.indexOf(sig);
  while (at >= 0) {
    const nameLength = out.readUInt16LE(at + 28);
    const entryName = out.subarray(at + 46, at + 46 + nameLength).toString('utf8');
    if (entryName === name) {
      out.writeUInt32LE(size, at + 24);
      return out;
    }
    at = out.indexOf(sig, at + 4);
  }
  throw new Error(`entry ${name} not in the central directory`);
}

export const SITE_INDEX = '<!doctype html><html><head><script src="__env.js"></script></head><body><h1>Hello site</h1></body></html>';

export async function siteZip(extra: ZipEntries = {}, index = SITE_INDEX): Promise<Buffer> {
  return zipOf({ 'index.html': index, 'assets/app-0123abcd.js': 'console.log("app")', 'robots.txt': 'User-agent: *', ...extra });
}

/** The path and query of a platform URL (the test platform's base_url names port 0; requests go to its real port). */
export function pathOf(url: string): string {
  const u = new URL(url, 'http://relative.invalid');
  return u.pathname + u.search;
}

export interface RawReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** One request over node:http with the path sent byte for byte (fetch would normalise ../ and %2e%2e away). */
export function rawRequest(
  baseUrl: string,
  path: string,
  opts: { method?: string; headers?: Record<string, string>; body?: Buffer | Buffer[] } = {},
): Promise<RawReply> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, path, method: opts.method ?? 'GET', headers: opts.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    // A server that answers early and closes may cut our upload short; the answer is what the test checks.
    req.on('error', (err) => reject(err));
    if (Array.isArray(opts.body)) {
      const parts = opts.body;
      const writeNext = (i: number): void => {
        if (i >= parts.length) return void req.end();
        if (req.destroyed) return;
        req.write(parts[i], () => setImmediate(() => writeNext(i + 1)));
      };
      writeNext(0);
    } else {
      req.end(opts.body);
    }
  });
}

export async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 15_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} not met in time`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The live site's address of an app: its own host, `{subdomain}.{base_domain}` (localhost's by default in tests). */
export async function appSiteUrl(p: TestPlatform, appId: string): Promise<string> {
  const [{ subdomain }] = await p.sql('select subdomain from apps where id = $1', [appId]);
  return `http://${subdomain}.${p.services.config.baseDomain}/`;
}
