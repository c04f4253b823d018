// Every regular expression of the platform's code is checked for super-linear backtracking (ReDoS) by recheck, which
// proves a pattern linear or finds an attack string: a pattern that backtracks quadratically on a long run of input
// (such as /[ \t]+$/gm on spaces followed by a letter) could hold the event loop for seconds per request.
//
// Literals are read from the source with a parser; `new RegExp(...)` built from a template is resolved when its parts
// are string constants of the same file; what cannot be resolved must be listed in REVIEWED with the reason it is safe.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from '@babel/parser';
import { checkSync } from 'recheck';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DIRS = ['src', 'tools', 'workers'];

/** Dynamic patterns that are not built from constants, each with why it is linear. */
const REVIEWED: Record<string, string> = {
  'src/transports/rest.ts': 'route paths of the registry, every character escaped; only literal text and [^/]+ segments',
  'src/transports/route-table.ts': 'route paths of the registry: literal text and ([^/]+?) segments between slashes',
  'tools/rag/rag.ts': 'an alternation of the fixed embedding model names after [^\\s/]+/',
  'src/rag/chunk.ts': "gpt-tokenizer's cl100k pre-tokenizer (tiktoken's pattern), linear on runs of every character class up to 1.6 MB",
};

interface Found {
  where: string;
  source: string;
  flags: string;
}

type Node = { type: string; [key: string]: any };

function files(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)));
}

/** Every node of the tree, depth first. */
function* walk(node: unknown): Generator<Node> {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const child of node) yield* walk(child);
    return;
  }
  const n = node as Node;
  if (typeof n.type === 'string') yield n;
  for (const [key, value] of Object.entries(n)) {
    if (key !== 'loc' && key !== 'start' && key !== 'end' && key !== 'extra') yield* walk(value);
  }
}

/** The text of a string-valued expression built only from literals and the file's string constants, else undefined. */
function stringOf(node: Node | undefined, constants: Map<string, Node>, seen = new Set<string>()): string | undefined {
  if (!node) return undefined;
  if (node.type === 'StringLiteral') return node.value;
  const value = numberOf(node, constants);
  if (value !== undefined) return String(value);
  // ['a', 'b'].join('|')
  if (node.type === 'CallExpression' && node.callee.type === 'MemberExpression' && node.callee.property.name === 'join' && node.callee.object.type === 'ArrayExpression') {
    const items = (node.callee.object.elements as Node[]).map((e) => stringOf(e, constants, seen));
    const separator = node.arguments[0] ? stringOf(node.arguments[0], constants, seen) : ',';
    return items.some((i) => i === undefined) || separator === undefined ? undefined : items.join(separator);
  }
  const raw = node.type === 'TaggedTemplateExpression' && node.tag.type === 'MemberExpression' && node.tag.object.name === 'String' && node.tag.property.name === 'raw';
  const template = raw ? node.quasi : node.type === 'TemplateLiteral' ? node : undefined;
  if (!template) {
    if (node.type !== 'Identifier' || seen.has(node.name)) return undefined;
    return stringOf(constants.get(node.name), constants, new Set([...seen, node.name]));
  }
  let out = '';
  for (let i = 0; i < template.quasis.length; i++) {
    out += raw ? template.quasis[i].value.raw : template.quasis[i].value.cooked;
    if (i < template.expressions.length) {
      const part = stringOf(template.expressions[i], constants, seen);
      if (part === undefined) return undefined;
      out += part;
    }
  }
  return out;
}

/** A number computed from numeric literals and the file's numeric constants (e.g. `MAX / 2 - 2`), else undefined. */
function numberOf(node: Node | undefined, constants: Map<string, Node>): number | undefined {
  if (!node) return undefined;
  if (node.type === 'NumericLiteral') return node.value;
  if (node.type === 'Identifier' && constants.get(node.name)?.type === 'NumericLiteral') return constants.get(node.name)!.value;
  if (node.type !== 'BinaryExpression' || !['+', '-', '*', '/'].includes(node.operator)) return undefined;
  const [a, b] = [numberOf(node.left, constants), numberOf(node.right, constants)];
  if (a === undefined || b === undefined) return undefined;
  return node.operator === '+' ? a + b : node.operator === '-' ? a - b : node.operator === '*' ? a * b : a / b;
}

function regexesOf(file: string): { found: Found[]; unresolved: string[] } {
  const ast = parse(readFileSync(path.join(ROOT, file), 'utf8'), { sourceType: 'module', plugins: ['typescript'] });
  const constants = new Map<string, Node>();
  for (const n of walk(ast.program.body)) {
    if (n.type === 'VariableDeclarator' && n.id.type === 'Identifier' && n.init) constants.set(n.id.name, n.init);
  }
  const found: Found[] = [];
  const unresolved: string[] = [];
  for (const n of walk(ast.program)) {
    const where = `${file}:${n.loc?.start.line}`;
    if (n.type === 'RegExpLiteral') found.push({ where, source: n.pattern, flags: n.flags });
    if ((n.type === 'NewExpression' || n.type === 'CallExpression') && n.callee.type === 'Identifier' && n.callee.name === 'RegExp') {
      const source = stringOf(n.arguments[0], constants);
      const flags = n.arguments[1] ? stringOf(n.arguments[1], constants) : '';
      if (source === undefined || flags === undefined) unresolved.push(where);
      else found.push({ where, source, flags });
    }
  }
  return { found, unresolved };
}

describe('regular expressions', () => {
  const all = DIRS.flatMap(files).map((file) => ({ file, ...regexesOf(file) }));

  it('are all found: dynamic patterns are resolved or reviewed', () => {
    const unresolved = all.filter((f) => f.unresolved.length).map((f) => f.file);
    expect(unresolved.sort()).toEqual(Object.keys(REVIEWED).sort());
    expect(all.reduce((n, f) => n + f.found.length, 0)).toBeGreaterThan(150);
  });

  it('none backtracks super-linearly (recheck)', { timeout: 300_000 }, () => {
    const vulnerable: string[] = [];
    for (const { where, source, flags } of all.flatMap((f) => f.found)) {
      const diagnostics = checkSync(source, flags, { timeout: 20_000, randomSeed: 1 });
      if (diagnostics.status !== 'safe') {
        const why = diagnostics.status === 'vulnerable' ? `${diagnostics.complexity.summary}, e.g. ${diagnostics.attack.pattern}` : diagnostics.status;
        vulnerable.push(`${where} /${source}/${flags}: ${why}`);
      }
    }
    expect(vulnerable).toEqual([]);
  });

  it('a quadratic pattern is caught, and its linear rewrite passes', () => {
    expect(checkSync('[ \\t]+$', 'gm', { randomSeed: 1 }).status).toBe('vulnerable');
    expect(checkSync('(?<![ \\t])[ \\t]+$', 'gm', { randomSeed: 1 }).status).toBe('safe');
  });
});
