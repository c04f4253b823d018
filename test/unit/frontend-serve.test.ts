import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cacheControlFor, contentTypeFor, envScript, isHashedAsset, pathSegments, resolveSiteFile } from '../../src/frontend/serve.ts';
import type { Site } from '../../src/frontend/service.ts';

describe('pathSegments', () => {
  it('decodes each segment once', () => {
    expect(pathSegments('/a/b%20c/d.js')).toEqual(['a', 'b c', 'd.js']);
    expect(pathSegments('/')).toEqual([]);
    expect(pathSegments('//a//b/')).toEqual(['a', 'b']);
    expect(pathSegments('/%252e%252e/x')).toEqual(['%2e%2e', 'x']);
  });

  it.each(['/../etc/passwd', '/a/%2e%2e/b', '/%2E%2E', '/.%2e/x', '/..%2fetc', '/..%5cetc', '/a%00b', '/%c0%ae', '/./x', '/%zz'])('refuses %s', (raw) => {
    expect(pathSegments(raw)).toBeNull();
  });
});

describe('content types and caching', () => {
  it('maps common extensions, case-insensitively, and falls back to octet-stream', () => {
    expect(contentTypeFor('index.html')).toBe('text/html; charset=utf-8');
    expect(contentTypeFor('A.JS')).toBe('text/javascript; charset=utf-8');
    expect(contentTypeFor('a.css')).toBe('text/css; charset=utf-8');
    expect(contentTypeFor('a.svg')).toBe('image/svg+xml');
    expect(contentTypeFor('a.wasm')).toBe('application/wasm');
    expect(contentTypeFor('a.webmanifest')).toBe('application/manifest+json; charset=utf-8');
    expect(contentTypeFor('Makefile')).toBe('application/octet-stream');
  });

  it.each([
    ['assets/app-3f9a1c2b.js', true],
    ['assets/index-BzK3j1sx.js', true],
    ['static/js/main.8c2f1a9e.chunk.js', true],
    ['assets/logo.3f9a1c2b9d.svg', true],
    ['_next/static/chunks/pages/index.js', true],
    ['assets/app.js', false],
    ['assets/whatever.js', false],
    ['assets/index-abcdefgh.js', false],
    ['assets/bootstrap.min.js', false],
    ['favicon.ico', false],
    ['app-3f9a1c2.js', false],
  ])('isHashedAsset(%s) is %s', (p, hashed) => {
    expect(isHashedAsset(p)).toBe(hashed);
  });

  it('HTML is never cached long, even with a hash in its name', () => {
    expect(cacheControlFor('index.html')).toBe('no-cache');
    expect(cacheControlFor('page-3f9a1c2b.html')).toBe('no-cache');
    expect(cacheControlFor('assets/app-3f9a1c2b.js')).toBe('public, max-age=31536000, immutable');
    expect(cacheControlFor('robots.txt')).toBe('no-cache');
  });
});

describe('envScript', () => {
  it('assigns window.__ENV__ and cannot be broken out of', () => {
    const text = envScript({ A: '</script><script>alert(1)</script>', B: 'line\u2028sep' });
    expect(text).not.toContain('</script>');
    expect(text).not.toContain('\u2028');
    const window: { __ENV__?: unknown } = {};
    new Function('window', text)(window);
    expect(window.__ENV__).toEqual({ A: '</script><script>alert(1)</script>', B: 'line\u2028sep' });
  });
});

describe('resolveSiteFile', () => {
  let root: string;
  let outside: string;
  const site = (framework: Site['framework']): Site => ({ deploymentId: 'x', framework, root });

  beforeAll(() => {
    const base = mkdtempSync(path.join(tmpdir(), 'svc-site-'));
    root = path.join(base, 'site');
    outside = path.join(base, 'secret.txt');
    mkdirSync(path.join(root, 'docs'), { recursive: true });
    writeFileSync(path.join(root, 'index.html'), 'home');
    writeFileSync(path.join(root, 'docs/index.html'), 'docs');
    writeFileSync(path.join(root, 'about.html'), 'about');
    writeFileSync(path.join(root, '404.html'), 'nf');
    writeFileSync(outside, 'secret');
    // Extraction never creates links; serving refuses them anyway.
    symlinkSync(outside, path.join(root, 'link.txt'));
  });
  afterAll(() => rmSync(path.dirname(root), { recursive: true, force: true }));

  it('serves files, folder index.html and redirects folders without a slash', async () => {
    expect(await resolveSiteFile(site('static'), [], true)).toEqual({ file: path.join(root, 'index.html'), status: 200 });
    expect(await resolveSiteFile(site('static'), ['docs'], true)).toEqual({ file: path.join(root, 'docs/index.html'), status: 200 });
    expect(await resolveSiteFile(site('static'), ['docs'], false)).toEqual({ redirect: true });
  });

  it('applies each framework rule for misses', async () => {
    expect(await resolveSiteFile(site('react-vite'), ['some', 'route'], false)).toEqual({ file: path.join(root, 'index.html'), status: 200 });
    expect(await resolveSiteFile(site('react-vite'), ['missing.js'], false)).toBeUndefined();
    expect(await resolveSiteFile(site('nextjs-static'), ['about'], false)).toEqual({ file: path.join(root, 'about.html'), status: 200 });
    expect(await resolveSiteFile(site('nextjs-static'), ['nope'], false)).toEqual({ file: path.join(root, '404.html'), status: 404 });
    expect(await resolveSiteFile(site('static'), ['about'], false)).toEqual({ file: path.join(root, '404.html'), status: 404 });
  });

  it('never resolves outside the root, nor through a link', async () => {
    expect(await resolveSiteFile(site('other'), ['..', 'secret.txt'], false)).toBeUndefined();
    expect(await resolveSiteFile(site('react-vite'), ['link.txt'], false)).toBeUndefined();
  });
});
