// The wire between the platform (Node) and a function's runner (Deno): newline-delimited JSON frames over the
// child's stdin (platform -> runner) and stdout (runner -> platform). This module is loaded by BOTH runtimes
// (src/functions/runner.ts imports it inside Deno), so it uses web-standard APIs only: no Node imports, no Buffer.
//
// JSON.stringify escapes every newline inside strings, so a raw 0x0A byte only ever ends a frame. Binary bodies
// travel as base64 strings.

export interface EndUser {
  id: string;
  claims: Record<string, unknown>;
}

/** The first frame: the module to load and the context every request of this process shares. */
export interface InitFrame {
  type: 'init';
  /** `data:application/typescript;base64,...`: no file access is needed to load it. */
  url: string;
  /** Shown instead of the long data: URL in error messages and stack traces. */
  filename: string;
  env: Record<string, string>;
  appId: string;
}

/** One HTTP request; several may be in flight on one runner, told apart by id. */
export interface RequestFrame {
  type: 'request';
  id: number;
  method: string;
  url: string;
  headers: Array<[string, string]>;
  /** base64, or null for no body. */
  body: string | null;
  user: EndUser | null;
  token: string | null;
}

export type HostFrame = InitFrame | RequestFrame;

export type LogLevel = 'log' | 'info' | 'warn' | 'error' | 'debug';

export type RunnerFrame =
  | { type: 'ready' }
  | { type: 'init_error'; message: string }
  | { type: 'head'; id: number; status: number; headers: Array<[string, string]> }
  | { type: 'chunk'; id: number; data: string }
  /** rss: the process's resident set size in bytes when the response ended. */
  | { type: 'end'; id: number; rss?: number }
  | { type: 'error'; id: number; message: string }
  /** id: the request being handled, or null for output outside any request (module top level, background timers). */
  | { type: 'log'; id: number | null; level: LogLevel; message: string };

const LOG_LEVELS: ReadonlySet<string> = new Set(['log', 'info', 'warn', 'error', 'debug']);

export function encodeFrame(frame: HostFrame | RunnerFrame): string {
  return JSON.stringify(frame) + '\n';
}

/**
 * Checks a frame read from a runner. The runner's stdout is reachable by the user's code, so nothing read from it
 * is trusted: a malformed frame is a protocol error that ends the process. Returns undefined when invalid.
 */
export function parseRunnerFrame(line: string): RunnerFrame | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const f = value as Record<string, unknown>;
  const isId = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);
  switch (f.type) {
    case 'ready':
      return { type: 'ready' };
    case 'init_error':
      return typeof f.message === 'string' ? { type: 'init_error', message: f.message } : undefined;
    case 'head': {
      if (!isId(f.id) || !isId(f.status) || !Array.isArray(f.headers)) return undefined;
      const headers: Array<[string, string]> = [];
      for (const pair of f.headers as unknown[]) {
        if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') return undefined;
        headers.push([pair[0], pair[1]]);
      }
      return { type: 'head', id: f.id, status: f.status, headers };
    }
    case 'chunk':
      return isId(f.id) && typeof f.data === 'string' ? { type: 'chunk', id: f.id, data: f.data } : undefined;
    case 'end':
      if (!isId(f.id)) return undefined;
      return typeof f.rss === 'number' && Number.isFinite(f.rss) ? { type: 'end', id: f.id, rss: f.rss } : { type: 'end', id: f.id };
    case 'error':
      return isId(f.id) && typeof f.message === 'string' ? { type: 'error', id: f.id, message: f.message } : undefined;
    case 'log':
      if (!(f.id === null || isId(f.id)) || typeof f.message !== 'string' || typeof f.level !== 'string' || !LOG_LEVELS.has(f.level)) return undefined;
      return { type: 'log', id: f.id, level: f.level as LogLevel, message: f.message };
    default:
      return undefined;
  }
}

/**
 * Splits a byte stream into lines (without the newline). Chunks are kept as they arrive and only joined when a
 * newline completes a line, so a multi-megabyte frame costs one copy, not one per chunk.
 */
export class LineSplitter {
  readonly #decoder = new TextDecoder();
  #parts: Uint8Array[] = [];
  #pending = 0;
  readonly #maxLine: number;

  /** maxLine: a line longer than this many bytes throws (a runaway or hostile writer). */
  constructor(maxLine = 64 * 1024 * 1024) {
    this.#maxLine = maxLine;
  }

  push(chunk: Uint8Array): string[] {
    const lines: string[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl < 0) break;
      const piece = chunk.subarray(start, nl);
      if (this.#parts.length === 0) {
        lines.push(this.#decoder.decode(piece));
      } else {
        this.#parts.push(piece);
        lines.push(this.#decoder.decode(concat(this.#parts, this.#pending + piece.length)));
        this.#parts = [];
        this.#pending = 0;
      }
      start = nl + 1;
    }
    if (start < chunk.length) {
      // Copy (Uint8Array's slice, not Buffer's view): the caller may reuse its buffer.
      const rest = Uint8Array.prototype.slice.call(chunk, start);
      this.#pending += rest.length;
      if (this.#pending > this.#maxLine) throw new Error(`frame longer than ${this.#maxLine} bytes`);
      this.#parts.push(rest);
    }
    return lines;
  }
}

function concat(parts: Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
