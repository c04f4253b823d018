// The platform's manual, served to persons at /docs (src/transports/raw/manual.ts): the pages of docs/ and the README,
// rendered from Markdown once per process, with the navigation docs/index.md lists and a search over every section.
// The files are the repository's own (no request names a file: pages are looked up by name in what was loaded), and
// the search matches words by plain substring tests, linear in the manual's size, with no pattern built from input.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Marked, type Tokens } from 'marked';

/** A page as served: its title, its HTML, and its sections for search. */
interface Page {
  name: string;
  title: string;
  html: string;
  sections: Section[];
}

interface Section {
  heading: string;
  anchor: string;
  /** The section's Markdown, lowercased, searched by substring. */
  lower: string;
  text: string;
}

export interface NavEntry {
  name: string;
  title: string;
  depth: number;
}

export interface SearchHit {
  page: string;
  title: string;
  heading: string;
  anchor: string;
  snippet: string;
}

/** Page names as URLs have them: `schema`, `design/realtime`, `readme`. */
const PAGE_NAME = /^[a-z0-9-]{1,64}(\/[a-z0-9-]{1,64})?$/;
export const MAX_QUERY_CHARS = 200;
export const MAX_HITS = 50;

/** GitHub's heading anchors: lowercased, punctuation but '-' and '_' removed, spaces to '-'; repeats get -1, -2... */
export function slugOf(text: string, seen: Map<string, number>): string {
  const base = text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
  const n = seen.get(base) ?? 0;
  seen.set(base, n + 1);
  return n === 0 ? base : `${base}-${n}`;
}

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** marked's plain text of a heading keeps its entities: the title and anchors want the characters. */
const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
const unescapeHtml = (s: string) => s.replace(/&(?:amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e]!);

export class Manual {
  readonly #docsDir: string;
  readonly #readme: string;
  #pages: Promise<Map<string, Page>> | undefined;
  #nav: NavEntry[] = [];

  constructor(docsDir: string, readme: string) {
    this.#docsDir = docsDir;
    this.#readme = readme;
  }

  /** The page named `name`, or undefined; '' is the table of contents (docs/index.md). */
  async page(name: string): Promise<Page | undefined> {
    if (name !== '' && !PAGE_NAME.test(name)) return undefined;
    const pages = await this.#load();
    // A folder's page is its index.md: /docs/reference/ is docs/reference/index.md.
    return pages.get(name === '' ? 'index' : name) ?? (name.includes('/') ? undefined : pages.get(`${name}/index`));
  }

  async nav(): Promise<NavEntry[]> {
    await this.#load();
    return this.#nav;
  }

  /** Sections holding every word of the query (at most 10 words), in manual order, with a snippet around the first. */
  async search(query: string): Promise<SearchHit[]> {
    const words = [...new Set(query.slice(0, MAX_QUERY_CHARS).toLowerCase().split(/[^\p{L}\p{N}_]+/u).filter(Boolean))].slice(0, 10);
    if (!words.length) return [];
    const pages = await this.#load();
    const order = [...this.#nav.map((n) => n.name), ...pages.keys()];
    const hits: SearchHit[] = [];
    for (const name of new Set(order)) {
      const page = pages.get(name);
      for (const s of page?.sections ?? []) {
        if (!words.every((w) => s.lower.includes(w))) continue;
        // Around the first word in the section's text (or its start, when only the heading has it).
        const at = Math.max(0, s.text.toLowerCase().indexOf(words[0]!));
        const snippet = s.text.slice(Math.max(0, at - 80), at + 160).replace(/\s+/g, ' ').trim();
        hits.push({ page: name, title: page!.title, heading: s.heading, anchor: s.anchor, snippet });
        if (hits.length >= MAX_HITS) return hits;
      }
    }
    return hits;
  }

  #load(): Promise<Map<string, Page>> {
    this.#pages ??= this.#read().catch((err: unknown) => {
      this.#pages = undefined;
      throw err;
    });
    return this.#pages;
  }

  async #read(): Promise<Map<string, Page>> {
    const files = (await readdir(this.#docsDir, { recursive: true })).filter((f) => f.endsWith('.md'));
    const sources: Array<[string, string, string]> = [['readme', this.#readme, path.dirname(this.#readme)]];
    for (const file of files) {
      const name = file.slice(0, -'.md'.length).split(path.sep).join('/');
      if (PAGE_NAME.test(name)) sources.push([name, path.join(this.#docsDir, file), path.dirname(path.join(this.#docsDir, file))]);
    }
    const pages = new Map<string, Page>();
    for (const [name, file, dir] of sources) pages.set(name, this.#render(name, await readFile(file, 'utf8'), dir));
    const index = await readFile(path.join(this.#docsDir, 'index.md'), 'utf8').catch(() => '');
    this.#nav = navOf(index, this.#docsDir);
    return pages;
  }

  #render(name: string, markdown: string, dir: string): Page {
    const seen = new Map<string, number>();
    const sections: Section[] = [];
    let title = name;
    const docsDir = this.#docsDir;
    const readme = this.#readme;
    const marked = new Marked({
      gfm: true,
      renderer: {
        heading({ tokens, depth }: Tokens.Heading) {
          const plain = unescapeHtml(this.parser.parseInline(tokens, this.parser.textRenderer));
          const anchor = slugOf(plain, seen);
          if (depth === 1 && title === name) title = plain;
          sections.push({ heading: plain, anchor, lower: '', text: '' });
          return `<h${depth} id="${escapeHtml(anchor)}">${this.parser.parseInline(tokens)}</h${depth}>\n`;
        },
        link({ href, title: linkTitle, tokens }: Tokens.Link) {
          const inner = this.parser.parseInline(tokens);
          const target = manualHref(href, dir, docsDir, readme);
          if (target === null) return `<code>${inner}</code>`;
          return `<a href="${escapeHtml(target)}"${linkTitle ? ` title="${escapeHtml(linkTitle)}"` : ''}>${inner}</a>`;
        },
        image({ href, text }: Tokens.Image) {
          const target = manualHref(href, dir, docsDir, readme);
          return target === null ? escapeHtml(text) : `<img src="${escapeHtml(target)}" alt="${escapeHtml(text)}">`;
        },
        // The manual is the repository's own text, but raw HTML in it is shown, not run (comments are left out).
        html({ text }: Tokens.HTML | Tokens.Tag) {
          return text.trimStart().startsWith('<!--') ? '' : escapeHtml(text);
        },
      },
    });
    const tokens = marked.lexer(markdown);
    // Sections for search: the Markdown between one heading and the next, under the heading's anchor.
    const raw: string[] = [''];
    for (const t of tokens) {
      if (t.type === 'heading') raw.push('');
      else raw[raw.length - 1] += t.raw;
    }
    const html = marked.parser(tokens);
    const body = sections.map((s, i) => ({ ...s, text: raw[i + 1] ?? '', lower: (s.heading + '\n' + (raw[i + 1] ?? '')).toLowerCase() }));
    if (raw[0]!.trim()) body.unshift({ heading: title, anchor: '', text: raw[0]!, lower: raw[0]!.toLowerCase() });
    return { name, title, html, sections: body };
  }
}

/**
 * Where a link of the manual points when served: another page (`schema.md#x` -> /docs/schema#x, the README ->
 * /docs/readme), a file of docs/ (an image), an outside address as written; null for a repository file that is not
 * served (a source file), shown as code instead.
 */
function manualHref(href: string, dir: string, docsDir: string, readme: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//')) return /^(https?|mailto):/i.test(href) ? href : null;
  if (href.startsWith('#')) return href;
  const [file, anchor] = href.split('#', 2) as [string, string | undefined];
  // A path of this origin only: a second slash or a backslash after the first would leave it.
  if (file.startsWith('/')) return /^\/(?![/\\])/.test(file) ? href : null;
  let decoded: string;
  try {
    decoded = decodeURIComponent(file);
  } catch {
    return null;
  }
  const full = path.resolve(dir, decoded);
  const hash = anchor === undefined ? '' : `#${anchor}`;
  if (full === readme) return `/docs/readme${hash}`;
  const inDocs = path.relative(docsDir, full);
  if (inDocs.startsWith('..') || path.isAbsolute(inDocs)) return null;
  const posix = inDocs.split(path.sep).join('/');
  if (posix.endsWith('.md')) return `/docs/${posix === 'index.md' ? '' : posix.slice(0, -3)}${hash}`;
  return `/docs/files/${posix}`;
}

/** The navigation: each `- [Title](page.md)` line of docs/index.md, nested by its indentation. */
function navOf(index: string, docsDir: string): NavEntry[] {
  const out: NavEntry[] = [];
  for (const line of index.split('\n')) {
    const m = /^( *)- \[([^\]]{1,200})\]\(([^)#\s]{1,200})\)/.exec(line);
    if (!m) continue;
    const target = manualHref(m[3]!, docsDir, docsDir, '');
    if (target === null || !target.startsWith('/docs/')) continue;
    out.push({ name: target.slice('/docs/'.length).split('#')[0]!, title: m[2]!, depth: Math.floor(m[1]!.length / 2) });
  }
  return out;
}
