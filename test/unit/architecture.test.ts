// The import graph keeps its direction (transports -> tools -> areas -> core): src/core imports no area, and no
// import circle spans more than one folder. Type-only imports count: they tie the files as much for a reader.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { parse } from '@babel/parser';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DIRS = ['src', 'tools', 'workers', 'resources', 'prompts'];

function sources(): string[] {
  return DIRS.flatMap((dir) =>
    readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && e.name.endsWith('.ts'))
      .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name))),
  );
}

/** The project files a file imports or re-exports from. */
function importsOf(file: string): string[] {
  const ast = parse(readFileSync(path.join(ROOT, file), 'utf8'), { sourceType: 'module', plugins: ['typescript'] });
  const out: string[] = [];
  for (const node of ast.program.body) {
    const from = 'source' in node && node.source && typeof node.source.value === 'string' ? node.source.value : undefined;
    if (!from?.startsWith('.')) continue;
    const target = path.normalize(path.join(path.dirname(file), from));
    if (existsSync(path.join(ROOT, target))) out.push(target);
  }
  return out;
}

/** Strongly connected components of more than one file (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      onStack.delete(w);
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('architecture', () => {
  const graph = new Map(sources().map((f) => [f, importsOf(f)]));

  it('src/core imports nothing outside src/core (but the config it is given)', () => {
    const outside = [...graph]
      .filter(([file]) => file.startsWith('src/core/'))
      .flatMap(([file, deps]) => deps.filter((d) => !d.startsWith('src/core/') && d !== 'src/config.ts').map((d) => `${file} -> ${d}`));
    expect(outside).toEqual([]);
  });

  it('areas that do not import adapters: src/adapters implements the ports these areas declare', () => {
    const areas = ['billing', 'monetization', 'ai', 'meetings', 'integrations', 'people', 'storage', 'identity', 'domains'];
    const reaching = [...graph]
      .filter(([file]) => areas.some((area) => file.startsWith(`src/${area}/`)))
      .flatMap(([file, deps]) => deps.filter((d) => d.startsWith('src/adapters/')).map((d) => `${file} -> ${d}`));
    expect(reaching).toEqual([]);
  });

  it('no import circle spans more than one folder', () => {
    const spanning = circles(graph).filter((c) => new Set(c.map((f) => path.dirname(f))).size > 1);
    expect(spanning).toEqual([]);
  });

  it('no import circle in billing or apps (issue 45: a jobs file names the service it calls by shape, not by type)', () => {
    expect(circles(graph).filter((c) => c.some((f) => f.startsWith('src/billing/') || f.startsWith('src/apps/')))).toEqual([]);
  });
});
