import { createReadStream, type Stats } from 'node:fs';
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';
import { errors } from '../core/errors.ts';
import { sendError } from '../transports/rest.ts';
import type { Site } from './service.ts';

/** The platform answers this file name at any depth of a site with the app's frontend environment. */
export const ENV_SCRIPT = '__env.js';

const TEXT = '; charset=utf-8';
export const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html' + TEXT,
  '.htm': 'text/html' + TEXT,
  '.js': 'text/javascript' + TEXT,
  '.mjs': 'text/javascript' + TEXT,
  '.cjs': 'text/javascript' + TEXT,
  '.css': 'text/css' + TEXT,
  '.json': 'application/json' + TEXT,
  '.map': 'application/json' + TEXT,
  '.webmanifest': 'application/manifest+json' + TEXT,
  '.txt': 'text/plain' + TEXT,
  '.md': 'text/markdown' + TEXT,
  '.csv': 'text/csv' + TEXT,
  '.xml': 'application/xml' + TEXT,
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.bmp': 'image/bmp',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.eot': 'application/vnd.ms-fontobject',
  '.wasm': 'application/wasm',
  '.pdf': 'application/pdf',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
  '.ogg': 'audio/ogg',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.zip': 'application/zip',
};

export function contentTypeFor(file: string): string {
  return CONTENT_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * A file whose name carries a content hash never changes under that name: `name-<hash>.ext` or
 * `name.<hash>.ext` with 8+ hex characters (webpack, Next, Rollup) or exactly 8 url-safe base64 characters
 * mixing letters and digits (Vite 5+), and everything under Next's `_next/static/`.
 */
export function isHashedAsset(relPath: string): boolean {
  const normalized = relPath.split(path.sep).join('/');
  if (normalized.startsWith('_next/static/')) return true;
  const base = path.posix.basename(normalized);
  // Hex anywhere between separators (app-3f9a1c2b.js, main.8c2f1a9e.chunk.js).
  if (/[.-][0-9a-f]{8,}\./i.test(base)) return true;
  // Vite's 8 url-safe base64 characters just before the extension (index-BzK3j1sx.js).
  const m = /[.-]([A-Za-z0-9_-]{8})\.[A-Za-z0-9]+$/.exec(base);
  return m !== null && /[0-9]/.test(m[1]!) && /[A-Za-z]/.test(m[1]!);
}

/** HTML is always revalidated (a new deployment must show at once); hashed assets are cached for a year. */
export function cacheControlFor(relPath: string): string {
  if (/\.html?$/i.test(relPath)) return 'no-cache';
  if (isHashedAsset(relPath)) return 'public, max-age=31536000, immutable';
  return 'no-cache';
}

/**
 * The request path below the site base as safe segments: each percent-decoded once, and refused (null)
 * when one is `.` or `..`, holds a slash, backslash or NUL after decoding, or is badly encoded.
 */
export function pathSegments(rawRest: string): string[] | null {
  const out: string[] = [];
  for (const raw of rawRest.split('/')) {
    if (raw === '') continue;
    let seg: string;
    try {
      seg = decodeURIComponent(raw);
    } catch {
      return null;
    }
    if (seg === '.' || seg === '..' || /[/\\\0]/.test(seg)) return null;
    out.push(seg);
  }
  return out;
}

/** The raw (still percent-encoded) path of a request, without the query. */
export function rawPath(req: Request): string {
  const url = req.originalUrl;
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** The query string of a request, with its "?", or "". */
export function rawQuery(req: Request): string {
  const q = req.originalUrl.indexOf('?');
  return q < 0 ? '' : req.originalUrl.slice(q);
}

async function fileStat(p: string): Promise<Stats | undefined> {
  try {
    return await lstat(p);
  } catch {
    return undefined;
  }
}

/** A missing path that looks like a client-side route (no extension, or .html) gets the SPA's index.html. */
function looksLikeRoute(segments: string[]): boolean {
  const last = segments.at(-1);
  if (!last) return true;
  const ext = path.extname(last);
  return ext === '' || ext === '.html';
}

type Resolved = { file: string; status: number } | { redirect: true } | undefined;

/** Maps a request to a file of the site per its framework's rules. Only regular files inside root qualify. */
export async function resolveSiteFile(site: Site, segments: string[], trailingSlash: boolean): Promise<Resolved> {
  const root = site.root;
  const target = path.join(root, ...segments);
  const rel = path.relative(root, target);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  const st = await fileStat(target);
  if (st?.isFile()) return { file: target, status: 200 };
  if (st?.isDirectory()) {
    if (!trailingSlash && segments.length > 0) return { redirect: true };
    const index = path.join(target, 'index.html');
    if ((await fileStat(index))?.isFile()) return { file: index, status: 200 };
  }
  if (site.framework === 'nextjs-static' && segments.length > 0 && !trailingSlash) {
    const html = target + '.html';
    if ((await fileStat(html))?.isFile()) return { file: html, status: 200 };
  }
  if (site.framework === 'react-vite') {
    if (looksLikeRoute(segments)) {
      const index = path.join(root, 'index.html');
      if ((await fileStat(index))?.isFile()) return { file: index, status: 200 };
    }
    return undefined;
  }
  const notFound = path.join(root, '404.html');
  if ((await fileStat(notFound))?.isFile()) return { file: notFound, status: 404 };
  return undefined;
}

export interface ServeOptions {
  /** The app's frontend environment for /__env.js, read only when that file is asked for. */
  publicEnv: () => Promise<Record<string, string>>;
}

/** window.__ENV__ as a script; `<` and line separators escaped so no value can end the script early. */
export function envScript(env: Record<string, string>): string {
  const json = JSON.stringify(env).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
  return `window.__ENV__ = ${json};\n`;
}

/** Serves `rawRest` (the encoded path below the site's base) of a site, including /__env.js at any depth. */
export async function serveSite(req: Request, res: Response, site: Site, rawRest: string, opts: ServeOptions): Promise<void> {
  const segments = pathSegments(rawRest);
  if (!segments) return sendError(res, errors.notFound(`File '${rawRest.slice(0, 200)}'`, 'Request a path inside the site.'));
  if (segments.at(-1) === ENV_SCRIPT) {
    const body = envScript(await opts.publicEnv());
    res.status(200).setHeader('Content-Type', 'text/javascript; charset=utf-8');
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.end(req.method === 'HEAD' ? undefined : body);
    return;
  }
  const resolved = await resolveSiteFile(site, segments, rawRest.endsWith('/'));
  if (!resolved) {
    return sendError(res, errors.notFound(`File '/${segments.join('/').slice(0, 200)}'`, 'Check the path; the site has no such file.'));
  }
  if ('redirect' in resolved) {
    res.redirect(301, rawPath(req) + '/' + rawQuery(req));
    return;
  }
  await sendSiteFile(req, res, site.root, resolved.file, resolved.status);
}

async function sendSiteFile(req: Request, res: Response, root: string, file: string, status: number): Promise<void> {
  const st = await lstat(file);
  const etag = `W/"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}"`;
  res.setHeader('Content-Type', contentTypeFor(file));
  res.setHeader('Cache-Control', cacheControlFor(path.relative(root, file)));
  res.setHeader('ETag', etag);
  res.setHeader('Last-Modified', st.mtime.toUTCString());
  res.setHeader('X-Content-Type-Options', 'nosniff');
  const inm = req.headers['if-none-match'];
  if (status === 200 && inm && inm.split(',').some((t) => t.trim() === etag)) {
    res.status(304).end();
    return;
  }
  res.status(status);
  res.setHeader('Content-Length', String(st.size));
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  try {
    await pipeline(createReadStream(file), res);
  } catch {
    // The client went away or the file vanished mid-read (a newer deployment replaced it): nothing to add.
    res.destroy();
  }
}
