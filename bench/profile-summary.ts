// Summarizes a V8 .cpuprofile (from BENCH_CPU_PROF=<dir> npm run bench): self time per function and per
// origin (a package in node_modules, node internals, the platform's own files), busy time only (idle excluded).
// Usage: node bench/profile-summary.ts <file.cpuprofile> [top=30]
import { readFileSync } from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg] = process.argv.slice(2);
if (!file) throw new Error('usage: node bench/profile-summary.ts <file.cpuprofile> [top]');
const top = Number(topArg ?? 30);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const ROOT = path.resolve(import.meta.dirname, '..');

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

function origin(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native / builtin)';
  if (url.startsWith('node:')) return 'node internals';
  const rel = url.startsWith('file://') ? path.relative(ROOT, new URL(url).pathname) : url;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(rel)?.[1];
  if (pkg) return pkg;
  return rel.split('/').slice(0, 2).join('/');
}

const fns = new Map<string, number>();
const origins = new Map<string, number>();
let busy = 0;
let idle = 0;
for (const [id, us] of selfUs) {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  if (functionName === '(idle)') {
    idle += us;
    continue;
  }
  busy += us;
  const rel = url.startsWith('file://') ? path.relative(ROOT, new URL(url).pathname) : url;
  const key = `${functionName || '(anonymous)'}  ${rel ? `${rel}:${lineNumber + 1}` : ''}`.trim();
  fns.set(key, (fns.get(key) ?? 0) + us);
  const o = origin(url, functionName);
  origins.set(o, (origins.get(o) ?? 0) + us);
}

const pct = (us: number) => `${((100 * us) / busy).toFixed(1).padStart(5)} %`;
console.log(`busy ${(busy / 1e6).toFixed(1)} s, idle ${(idle / 1e6).toFixed(1)} s (${((100 * idle) / (busy + idle)).toFixed(0)} % idle)\n`);
console.log('self time by origin (share of busy time)');
for (const [o, us] of [...origins].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`  ${pct(us)}  ${o}`);
console.log(`\ntop ${top} functions by self time (share of busy time)`);
for (const [f, us] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(us)}  ${f}`);

// Inclusive time (self + callees), each function counted once per stack even when it recurses.
const inclusiveOf = new Map<number, number>();
const inclusive = (id: number): number => {
  const node = byId.get(id)!;
  const total = (selfUs.get(id) ?? 0) + (node.children ?? []).reduce((n, c) => n + inclusive(c), 0);
  inclusiveOf.set(id, total);
  return total;
};
const rootId = profile.nodes[0]!.id;
inclusive(rootId);
const incl = new Map<string, number>();
const walk = (id: number, onStack: Set<string>): void => {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  const rel = url.startsWith('file://') ? path.relative(ROOT, new URL(url).pathname) : url;
  const key = `${functionName || '(anonymous)'}  ${rel ? `${rel}:${lineNumber + 1}` : ''}`.trim();
  const fresh = !onStack.has(key);
  if (fresh) {
    incl.set(key, (incl.get(key) ?? 0) + inclusiveOf.get(id)!);
    onStack.add(key);
  }
  for (const c of byId.get(id)!.children ?? []) walk(c, onStack);
  if (fresh) onStack.delete(key);
};
walk(rootId, new Set());
const filter = process.env.PROFILE_FILTER ? new RegExp(process.env.PROFILE_FILTER) : /(src|tools)\/|node_modules/;
console.log(`\ntop ${top} functions by inclusive time (share of busy time), matching ${filter}`);
for (const [f, us] of [...incl].filter(([k]) => filter.test(k)).sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(us)}  ${f}`);
