// A renderer for the subset of Helm's Go templates that deploy/helm/ uses, because no maintained Helm renderer runs
// from the npm registry (Helm is a Go program) and none is installed here. It is strict where Helm is lenient: a
// missing .Values path, an unknown function or an unsupported construct throws, so a template that strays outside
// the subset fails the test instead of rendering something Helm would not. What it implements: {{/* */}} comments,
// the trim markers, define/include, if/else/end, range over lists and maps (maps in sorted key order, as Go does)
// with $ and $variables, pipelines, and the functions in FUNCTIONS below. It is not Helm: sprig's other functions,
// parentheses, `with`, `else if`, `tpl`, `lookup` and Kubernetes schema validation are not there.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';

type Scope = { dot: unknown; root: unknown; vars: Map<string, unknown> };
type TemplateNode =
  | { kind: 'text'; text: string }
  | { kind: 'action'; expr: string }
  | { kind: 'if'; expr: string; then: TemplateNode[]; otherwise: TemplateNode[] }
  | { kind: 'range'; names: string[]; expr: string; body: TemplateNode[] };

export interface ChartRender {
  /** Rendered output by template file name (files whose output is only whitespace are left out, as Helm does). */
  files: Map<string, string>;
  /** Every .Values path the templates mention, rendered or not, as dotted paths. */
  valuePaths: string[];
}

/** Renders every template of the chart at `chartDir` with its values.yaml overlaid by `overrides`. */
export function renderChart(chartDir: string, overrides: Record<string, unknown> = {}, releaseName = 'svc'): ChartRender {
  // YAML 1.1 as Helm reads them: an unquoted off or yes in values.yaml is a boolean there too.
  const chart = parse(readFileSync(path.join(chartDir, 'Chart.yaml'), 'utf8'), { version: '1.1' }) as { name: string; version: string; appVersion: string };
  const values = deepMerge(parse(readFileSync(path.join(chartDir, 'values.yaml'), 'utf8'), { version: '1.1' }), overrides);
  const root = {
    Values: values,
    Release: { Name: releaseName, Namespace: 'default', Service: 'Helm' },
    Chart: { Name: chart.name, Version: chart.version, AppVersion: chart.appVersion },
  };
  const dir = path.join(chartDir, 'templates');
  const sources = new Map(readdirSync(dir).sort().map((name) => [name, readFileSync(path.join(dir, name), 'utf8')]));
  const defines = new Map<string, TemplateNode[]>();
  const bodies = new Map<string, TemplateNode[]>();
  for (const [name, source] of sources) bodies.set(name, parseTemplate(tokenize(source), defines));
  const files = new Map<string, string>();
  for (const [name, body] of bodies) {
    if (name.startsWith('_')) continue; // partials only define
    const out = renderNodes(body, { dot: root, root, vars: new Map() }, defines);
    if (out.trim()) files.set(name, out);
  }
  const valuePaths = [...new Set([...sources.values()].flatMap((s) => [...s.matchAll(/\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/g)].map((m) => m[1]!.slice(1))))];
  return { files, valuePaths };
}

/** Whether `dotted` (a.b.c) names a key present in `values`, whatever its value (an empty string or false counts). */
export function hasValuePath(values: unknown, dotted: string): boolean {
  let at: unknown = values;
  for (const key of dotted.split('.')) {
    if (!isRecord(at) || !(key in at)) return false;
    at = at[key];
  }
  return true;
}

type Token = { kind: 'text'; text: string } | { kind: 'action'; expr: string };

/** Text and actions, with the trim markers applied to the neighbouring text and comments dropped. */
function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  const re = /\{\{(-?)\s*([\s\S]*?)\s*(-?)\}\}/g;
  let last = 0;
  let trimNext = false;
  for (const m of source.matchAll(re)) {
    let text = source.slice(last, m.index);
    if (trimNext) text = text.replace(/^\s+/, '');
    if (m[1] === '-') text = text.replace(/\s+$/, '');
    if (text) tokens.push({ kind: 'text', text });
    if (!m[2]!.startsWith('/*')) tokens.push({ kind: 'action', expr: m[2]! });
    trimNext = m[3] === '-';
    last = m.index + m[0].length;
  }
  const tail = trimNext ? source.slice(last).replace(/^\s+/, '') : source.slice(last);
  if (tail) tokens.push({ kind: 'text', text: tail });
  return tokens;
}

/** The tree of one file; `define` blocks go into `defines`. Ends at the token list's end or at a closing keyword. */
function parseTemplate(tokens: Token[], defines: Map<string, TemplateNode[]>): TemplateNode[] {
  let i = 0;
  const block = (closers: string[]): { nodes: TemplateNode[]; closer: string } => {
    const nodes: TemplateNode[] = [];
    while (i < tokens.length) {
      const t = tokens[i++]!;
      if (t.kind === 'text') {
        nodes.push(t);
        continue;
      }
      const [keyword = ''] = t.expr.split(/\s+/, 1);
      if (closers.includes(t.expr) || closers.includes(keyword)) return { nodes, closer: t.expr };
      if (keyword === 'if') {
        const then = block(['else', 'end']);
        const otherwise = then.closer === 'else' ? block(['end']).nodes : [];
        nodes.push({ kind: 'if', expr: t.expr.slice(2).trim(), then: then.nodes, otherwise });
      } else if (keyword === 'range') {
        const m = /^range\s+(\$\w+)(?:\s*,\s*(\$\w+))?\s*:=\s*(.+)$/.exec(t.expr);
        if (!m) throw new Error(`unsupported range: {{ ${t.expr} }}`);
        nodes.push({ kind: 'range', names: [m[1]!, m[2]].filter((n): n is string => !!n), expr: m[3]!, body: block(['end']).nodes });
      } else if (keyword === 'define') {
        const name = /^define\s+"([^"]+)"$/.exec(t.expr)?.[1];
        if (!name) throw new Error(`unsupported define: {{ ${t.expr} }}`);
        defines.set(name, block(['end']).nodes);
      } else if (['else', 'end', 'with', 'block', 'template'].includes(keyword)) {
        throw new Error(`unsupported or unbalanced {{ ${t.expr} }}`);
      } else {
        nodes.push({ kind: 'action', expr: t.expr });
      }
    }
    if (closers.length) throw new Error(`missing {{ end }} (open block expects ${closers.join(' or ')})`);
    return { nodes, closer: '' };
  };
  return block([]).nodes;
}

function renderNodes(nodes: TemplateNode[], scope: Scope, defines: Map<string, TemplateNode[]>): string {
  let out = '';
  for (const node of nodes) {
    if (node.kind === 'text') out += node.text;
    else if (node.kind === 'action') out += display(evaluate(node.expr, scope, defines));
    else if (node.kind === 'if') out += renderNodes(truthy(evaluate(node.expr, scope, defines)) ? node.then : node.otherwise, scope, defines);
    else out += renderRange(node, scope, defines);
  }
  return out;
}

function renderRange(node: Extract<TemplateNode, { kind: 'range' }>, scope: Scope, defines: Map<string, TemplateNode[]>): string {
  const over = evaluate(node.expr, scope, defines);
  const entries: Array<[unknown, unknown]> = Array.isArray(over)
    ? over.map((v, i) => [i, v])
    : isRecord(over)
      ? Object.keys(over).sort().map((k) => [k, over[k]])
      : [];
  return entries
    .map(([key, value]) => {
      const vars = new Map(scope.vars);
      if (node.names.length === 2) vars.set(node.names[0]!, key).set(node.names[1]!, value);
      else vars.set(node.names[0]!, value);
      return renderNodes(node.body, { ...scope, dot: value, vars }, defines);
    })
    .join('');
}

type TemplateFunction = (args: unknown[], scope: Scope, defines: Map<string, TemplateNode[]>) => unknown;

const FUNCTIONS: Record<string, TemplateFunction> = {
  include: ([name, ctx], scope, defines) => {
    const body = defines.get(String(name));
    if (!body) throw new Error(`include of an undefined template "${String(name)}"`);
    return renderNodes(body, { ...scope, dot: ctx, vars: new Map() }, defines);
  },
  printf: ([format, ...args]) => {
    let i = 0;
    return String(format).replace(/%s/g, () => display(args[i++]));
  },
  trunc: ([n, s]) => String(s).slice(0, Number(n)),
  trimSuffix: ([suffix, s]) => (String(s).endsWith(String(suffix)) ? String(s).slice(0, -String(suffix).length) : String(s)),
  quote: ([v]) => JSON.stringify(display(v)),
  // YAML 1.1, as Helm's toYaml and Kubernetes read it: strings such as "off" or "yes" stay quoted, not booleans.
  toYaml: ([v]) => stringify(v, { version: '1.1' }).trimEnd(),
  nindent: ([n, s]) => '\n' + indent(String(s), Number(n)),
  indent: ([n, s]) => indent(String(s), Number(n)),
  default: ([fallback, v]) => (truthy(v) ? v : fallback),
  not: ([v]) => !truthy(v),
  and: (args) => args.every(truthy),
  or: (args) => args.some(truthy),
  fail: ([message]) => {
    throw new Error(`fail: ${String(message)}`);
  },
};

/** A pipeline: commands separated by |, each command's result passed as the last argument of the next. */
function evaluate(expr: string, scope: Scope, defines: Map<string, TemplateNode[]>): unknown {
  let piped: unknown[] = [];
  for (const command of splitOutsideQuotes(expr, '|')) {
    const [head, ...rest] = words(command);
    if (head === undefined) throw new Error(`empty command in {{ ${expr} }}`);
    const fn = FUNCTIONS[head];
    if (fn) piped = [fn([...rest.map((w) => operand(w, scope)), ...piped], scope, defines)];
    else if (!rest.length && !piped.length) piped = [operand(head, scope)];
    else throw new Error(`unknown function "${head}" in {{ ${expr} }}`);
  }
  return piped[0];
}

function operand(word: string, scope: Scope): unknown {
  if (word.startsWith('"')) return JSON.parse(word);
  if (/^-?\d+$/.test(word)) return Number(word);
  if (word === '.') return scope.dot;
  if (word === '$') return scope.root;
  if (word.startsWith('$')) {
    if (!scope.vars.has(word)) throw new Error(`undefined variable ${word}`);
    return scope.vars.get(word);
  }
  if (word.startsWith('.')) return field(scope.dot, word.slice(1).split('.'), word);
  throw new Error(`unsupported operand "${word}"`);
}

/** A field path from the dot; a missing key throws where Go would print "<no value>". */
function field(from: unknown, keys: string[], word: string): unknown {
  let at = from;
  for (const key of keys) {
    if (!isRecord(at) || !(key in at)) throw new Error(`${word}: no such value`);
    at = at[key];
  }
  return at;
}

function words(command: string): string[] {
  return command.match(/"(?:[^"\\]|\\.)*"|\S+/g) ?? [];
}

function splitOutsideQuotes(s: string, sep: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '"' && s[i - 1] !== '\\') quoted = !quoted;
    if (c === sep && !quoted) {
      parts.push(current.trim());
      current = '';
    } else current += c;
  }
  parts.push(current.trim());
  return parts;
}

/** Go's truth: false, 0, nil and empty strings, lists and maps are false. */
function truthy(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (isRecord(v)) return Object.keys(v).length > 0;
  return Boolean(v);
}

/** How Go's templates print a value: nil prints nothing here (Go prints "<no value>", never wanted in a manifest). */
function display(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return stringify(v, { version: '1.1' }).trimEnd();
  return String(v);
}

function indent(s: string, n: number): string {
  const pad = ' '.repeat(n);
  return s
    .split('\n')
    .map((line) => pad + line)
    .join('\n');
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function deepMerge(base: unknown, over: unknown): unknown {
  if (!isRecord(base) || !isRecord(over)) return over === undefined ? base : over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = deepMerge(base[k], v);
  return out;
}
