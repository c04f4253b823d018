// How a function's Deno process is started: the binary, the permission flags that are the sandbox, the network
// deny list and the (nearly empty) environment, and the pruning of what Deno caches under DENO_DIR.
import { existsSync, mkdirSync } from 'node:fs';
import { readdir, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const RUNNER_PATH = fileURLToPath(new URL('./runner.ts', import.meta.url));

/**
 * The Deno binary from npm: the platform package `@deno/<os>-<arch>[-glibc]` (the project depends on the linux
 * one directly), or the `deno` wrapper package, which copies the binary next to its bin script at install.
 */
export function resolveDenoBinary(configured?: string): string {
  if (configured) {
    if (!existsSync(configured)) throw new Error(`SVC_DENO_PATH ${configured} does not exist`);
    return configured;
  }
  const require = createRequire(import.meta.url);
  const exe = process.platform === 'win32' ? 'deno.exe' : 'deno';
  const candidates: string[] = [];
  try {
    candidates.push(path.join(path.dirname(require.resolve('deno/package.json')), exe));
  } catch {
    // not installed: try the platform package directly
  }
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
  const target = process.platform === 'linux' ? `linux-${arch}-glibc` : process.platform === 'win32' ? `win32-${arch}` : `darwin-${arch}`;
  try {
    candidates.push(path.join(path.dirname(require.resolve(`@deno/${target}/package.json`)), exe));
  } catch {
    // not installed
  }
  const found = candidates.find((c) => existsSync(c));
  if (!found) throw new Error('the Deno binary was not found: run npm ci (the `deno` package), or set SVC_DENO_PATH');
  return found;
}

/**
 * Always denied, whatever the operator sets: loopback (where the trust-auth Postgres and the platform itself
 * listen; Deno checks the resolved address, so `localhost` aliases and 127.0.0.2 are covered), the unspecified
 * addresses, and link-local (cloud metadata at 169.254.169.254).
 */
const ALWAYS_DENIED = ['localhost', '127.0.0.0/8', '0.0.0.0/8', '[::1]', '[::]', '169.254.0.0/16'];

/**
 * Denied unless SVC_FUNCTIONS_ALLOW_PRIVATE_NET=true: private and shared IPv4 ranges (DESIGN.md §10). Deno 2.9
 * accepts CIDR ranges for IPv4 only; IPv6 entries must be single addresses (IPv4-mapped IPv6 is normalised to
 * IPv4 and so covered).
 */
const PRIVATE_RANGES = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10'];

export interface DenyNetOptions {
  /** Connection strings whose hosts must be unreachable (the control and app database clusters). */
  databaseUrls: readonly string[];
  allowPrivateNet: boolean;
  /** SVC_FUNCTIONS_DENY_NET: more hosts, addresses or CIDR ranges. */
  extra: readonly string[];
}

function bracket(address: string): string {
  return isIP(address) === 6 && !address.startsWith('[') ? `[${address}]` : address;
}

/**
 * The --deny-net / --deny-import list. Database hosts are added by name and by every address they resolve to
 * now; without private ranges allowed, this machine's own interface addresses are added as well (a server bound
 * to 0.0.0.0 answers on them, not only on loopback).
 */
export async function buildDenyList(opts: DenyNetOptions): Promise<string[]> {
  const out = new Set<string>([...ALWAYS_DENIED]);
  if (!opts.allowPrivateNet) {
    for (const range of PRIVATE_RANGES) out.add(range);
    for (const list of Object.values(networkInterfaces())) {
      for (const iface of list ?? []) {
        if (iface.family === 'IPv6' && iface.scopeid) continue; // link-local: needs a zone to be reached
        out.add(bracket(iface.address));
      }
    }
  }
  for (const url of opts.databaseUrls) {
    let host: string;
    try {
      host = new URL(url).hostname;
    } catch {
      continue;
    }
    if (!host) continue;
    out.add(host);
    const bare = host.replace(/^\[|\]$/g, '');
    if (isIP(bare)) continue;
    try {
      for (const { address } of await lookup(bare, { all: true })) out.add(bracket(address));
    } catch {
      // unresolvable now: the name itself stays denied
    }
  }
  for (const entry of opts.extra) if (entry.trim()) out.add(entry.trim());
  return [...out];
}

export interface SandboxSpec {
  deno: string;
  denoDir: string;
  denyNet: readonly string[];
}

/**
 * The command line of one runner. Granted: outbound network except the deny list, and remote imports from Deno's
 * default allow-list of public module hosts (minus the deny list). Not granted: files, environment, subprocesses,
 * FFI, system information, writes. npm: specifiers are off (--no-npm): they would need the npm cache to be
 * readable from the sandbox.
 */
export function runnerArgs(spec: SandboxSpec, memoryLimitMb: number): string[] {
  const deny = spec.denyNet.join(',');
  return [
    'run',
    '--quiet',
    '--no-prompt',
    '--no-config',
    '--no-lock',
    '--no-npm',
    '--allow-net',
    `--deny-net=${deny}`,
    `--deny-import=${deny}`,
    `--v8-flags=--max-old-space-size=${memoryLimitMb}`,
    RUNNER_PATH,
  ];
}

/**
 * The child's entire environment: Deno's cache directory and no colours. Never the platform's variables
 * (DATABASE_URL, SVC_MASTER_KEY, ...): the child starts from an empty environment, and even so it has no
 * --allow-env.
 */
export function runnerEnv(spec: SandboxSpec): Record<string, string> {
  return { DENO_DIR: spec.denoDir, NO_COLOR: '1' };
}

export function ensureDir(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/**
 * Deno keeps the JavaScript it emitted for every module it loaded (one file per distinct code version, keyed by a
 * hash of the source) under DENO_DIR/gen/data; files older than this are removed hourly (a later cold start of
 * that code simply emits it again).
 */
export const EMIT_CACHE_MAX_AGE_MS = 7 * 24 * 3600_000;

/** Removes Deno's emitted JavaScript of modules not loaded for `maxAgeMs`. Returns the files removed. */
export async function pruneEmitCache(denoDir: string, maxAgeMs: number): Promise<number> {
  const dir = path.join(denoDir, 'gen', 'data');
  let removed = 0;
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const file = path.join(dir, name);
    const info = await stat(file).catch(() => undefined);
    if (!info || Date.now() - Math.max(info.mtimeMs, info.atimeMs) < maxAgeMs) continue;
    await rm(file, { force: true });
    removed++;
  }
  return removed;
}
