// The README stays a front door and the manual holds together: every relative link and image of README.md and
// docs/**/*.md names a file that exists, every #anchor names a heading of its page (GitHub's anchors, as the manual
// served at /docs makes them), and docs/index.md, the manual's navigation, lists every page of docs/.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Marked, Parser, TextRenderer } from 'marked';
import { describe, expect, it } from 'vitest';
import { slugOf } from '../../src/platform/manual.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DOCS = path.join(ROOT, 'docs');
const README = path.join(ROOT, 'README.md');
const README_MAX_LINES = 300;
/** Pages of docs/ that the navigation may leave out: design plans and the console's API audit, kept beside the manual. */
const UNLISTED = [/^design\//, /^console-api-audit\.md$/];
/** One navigation line: `- [Title](page.md): summary`, nested pages indented by two spaces. */
const NAV_LINE = /^(?: {2})*- \[[^\]]+\]\(([^)#\s]+\.md)\): \S/;

const marked = new Marked({ gfm: true });
const docPages = readdirSync(DOCS, { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.md'))
  .map((f) => f.split(path.sep).join('/'))
  .sort();

interface Page {
  anchors: Set<string>;
  /** Link and image targets, as written. */
  targets: string[];
}

const pages = new Map<string, Page>();
/** A Markdown file's heading anchors and link targets, parsed as GFM (so code spans and blocks hold no links). */
function pageOf(file: string): Page {
  let page = pages.get(file);
  if (page) return page;
  const seen = new Map<string, number>();
  page = { anchors: new Set(), targets: [] };
  const found = page;
  marked.walkTokens(marked.lexer(readFileSync(file, 'utf8')), (token) => {
    if (token.type === 'heading') found.anchors.add(slugOf(new Parser().parseInline(token.tokens ?? [], new TextRenderer()), seen));
    if (token.type === 'link' || token.type === 'image') found.targets.push(token.href);
  });
  pages.set(file, page);
  return page;
}

/** Why a link of `from` does not resolve, or null when it does; outside addresses are not checked. */
function brokenLink(from: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return null;
  const hash = target.indexOf('#');
  const file = hash < 0 ? target : target.slice(0, hash);
  const anchor = hash < 0 ? undefined : target.slice(hash + 1);
  const resolved = file === '' ? from : path.resolve(path.dirname(from), decodeURIComponent(file));
  if (!existsSync(resolved)) return `${target}: no file ${path.relative(ROOT, resolved)}`;
  if (anchor === undefined) return null;
  if (!resolved.endsWith('.md')) return `${target}: an anchor on a file that is not Markdown`;
  return pageOf(resolved).anchors.has(decodeURIComponent(anchor)) ? null : `${target}: no heading #${anchor} in ${path.relative(ROOT, resolved)}`;
}

describe('README and docs/', () => {
  it(`README.md is a front door of at most ${README_MAX_LINES} lines`, () => {
    const lines = readFileSync(README, 'utf8').trimEnd().split('\n').length;
    expect(lines).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it('every relative link and image of README.md and docs/**/*.md resolves, anchors included', () => {
    const broken: string[] = [];
    for (const file of [README, ...docPages.map((p) => path.join(DOCS, p))]) {
      for (const target of pageOf(file).targets) {
        const why = brokenLink(file, target);
        if (why) broken.push(`${path.relative(ROOT, file)}: ${why}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('docs/index.md is the navigation: "# Manual", then one "- [Title](page.md): summary" line per page, every page listed', () => {
    const [heading, ...rest] = readFileSync(path.join(DOCS, 'index.md'), 'utf8').trimEnd().split('\n');
    expect(heading).toBe('# Manual');
    const lines = rest.filter((l) => l.trim() !== '');
    expect(lines.filter((l) => !NAV_LINE.test(l))).toEqual([]);
    const listed = new Set(lines.map((l) => NAV_LINE.exec(l)![1]!));
    const missing = docPages.filter((p) => p !== 'index.md' && !listed.has(p) && !UNLISTED.some((re) => re.test(p)));
    expect(missing).toEqual([]);
  });
});
