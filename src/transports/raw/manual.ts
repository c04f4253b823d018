// GET /docs/: the platform's manual (docs/ and the README, src/platform/manual.ts) as HTML pages for persons, on the
// platform's own host: a page per file, the navigation of docs/index.md, a search form (GET /docs/search?q=) answered
// by the server, and the manual's images. No script runs on these pages; the stylesheet is the manual's own file.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Request, Response, Router } from 'express';
import { escapeHtml, Manual, MAX_HITS, MAX_QUERY_CHARS, type NavEntry, type SearchHit } from '../../platform/manual.ts';
import { rawQuery } from '../../frontend/serve.ts';
import { ownFileSources, SECURITY_HEADERS } from './approvals.ts';
import type { RawRoutes } from './index.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DOCS_DIR = path.join(ROOT, 'docs');
const STYLES = '/docs/manual.css';
// No SVG: opened on its own it would run script on the platform's origin.
const IMAGE = /^[a-z0-9][a-z0-9._-]{0,100}\.(png|jpg)$/;
const IMAGE_TYPES: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg' };


const CSS = `:root{color-scheme:light dark;font-family:system-ui,sans-serif;line-height:1.5}
body{margin:0}header{display:flex;gap:1rem;align-items:center;padding:.75rem 1.25rem;border-bottom:1px solid #8884}
header a{font-weight:600;text-decoration:none}form{display:flex;gap:.5rem;margin-left:auto}
.layout{display:flex;gap:2rem;padding:0 1.25rem}nav{flex:0 0 15rem;padding-top:1rem}nav ul{list-style:none;padding-left:0}
nav li.d1{padding-left:1rem}nav a[aria-current]{font-weight:700}main{flex:1;min-width:0;max-width:60rem;padding-bottom:4rem}
pre{overflow-x:auto;padding:.75rem;background:#8881}code{font-size:.95em}table{border-collapse:collapse;display:block;overflow-x:auto}
td,th{border:1px solid #8884;padding:.25rem .5rem;vertical-align:top}img{max-width:100%}
.hit p{margin:.25rem 0 1rem}@media (max-width:50rem){.layout{flex-direction:column}nav{flex:none}}`;

function layout(req: Request, platformOrigin: string, res: Response, title: string, nav: NavEntry[], current: string, main: string, query = ''): void {
  const links = nav
    .map((n) => `<li class="d${Math.min(n.depth, 1)}"><a href="/docs/${escapeHtml(n.name)}"${n.name === current ? ' aria-current="page"' : ''}>${escapeHtml(n.title)}</a></li>`)
    .join('');
  const policy = `default-src 'none'; style-src ${ownFileSources(req, platformOrigin, STYLES)}; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`;
  res.set({ ...SECURITY_HEADERS, 'content-security-policy': policy, 'content-type': 'text/html; charset=utf-8' });
  res.send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Manual</title><link rel="stylesheet" href="${STYLES}"></head><body>
<header><a href="/docs/">Manual</a><a href="/console/">Console</a><form role="search" action="/docs/search" method="get"><label for="q">Search the manual</label>
<input id="q" name="q" type="search" maxlength="${MAX_QUERY_CHARS}" value="${escapeHtml(query)}"><button type="submit">Search</button></form></header>
<div class="layout"><nav aria-label="Manual"><ul>${links}</ul></nav><main>${main}</main></div></body></html>`);
}

function results(query: string, hits: SearchHit[]): string {
  const items = hits
    .map((h) => `<li class="hit"><a href="/docs/${escapeHtml(h.page)}${h.anchor ? `#${escapeHtml(h.anchor)}` : ''}">${escapeHtml(h.title)}${h.heading !== h.title ? ` › ${escapeHtml(h.heading)}` : ''}</a><p>${escapeHtml(h.snippet)}</p></li>`)
    .join('');
  const count =
    hits.length === 0 ? 'No section matches' : hits.length >= MAX_HITS ? `The first ${hits.length} sections that match` : `${hits.length} section${hits.length === 1 ? '' : 's'} match`;
  return `<h1>Search</h1><p role="status">${count} “${escapeHtml(query)}”.</p><ol>${items}</ol>`;
}

async function serve(manual: Manual, platformOrigin: string, req: Request, res: Response): Promise<void> {
  const rest = req.path.replace(/^\/+/, '');
  if (rest === 'manual.css') {
    res.set({ ...SECURITY_HEADERS, 'content-type': 'text/css; charset=utf-8' }).send(CSS);
    return;
  }
  const image = /^files\/(screenshots\/)?([^/]+)$/.exec(rest);
  if (image && IMAGE.test(image[2]!)) {
    const bytes = await readFile(path.join(DOCS_DIR, image[1] ?? '', image[2]!)).catch(() => undefined);
    if (bytes) {
      res.set({ ...SECURITY_HEADERS, 'content-type': IMAGE_TYPES[image[2]!.split('.').pop()!]! }).send(bytes);
      return;
    }
  }
  const nav = await manual.nav();
  if (rest === 'search') {
    const q = typeof req.query.q === 'string' ? req.query.q.slice(0, MAX_QUERY_CHARS) : '';
    return layout(req, platformOrigin, res, `Search: ${q}`, nav, '', results(q, await manual.search(q)), q);
  }
  const page = await manual.page(rest.replace(/\/$/, ''));
  if (!page) {
    res.status(404);
    return layout(req, platformOrigin, res, 'Not found', nav, '', `<h1>Not found</h1><p>The manual has no page <code>${escapeHtml(rest)}</code>; the list is on the left, or search.</p>`);
  }
  layout(req, platformOrigin, res, page.title, nav, page.name === 'index' ? '' : page.name, page.html);
}

export const manualRoutes: RawRoutes = {
  platformHostOnly: true,
  early: (router: Router, services) => {
    const manual = new Manual(DOCS_DIR, path.join(ROOT, 'README.md'));
    router.use('/docs', (req, res, next) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') return next();
      if (req.originalUrl.split('?')[0] === '/docs') return res.redirect(301, `/docs/${rawQuery(req)}`);
      serve(manual, services.config.platformOrigin, req, res).catch(next);
    });
  },
};
