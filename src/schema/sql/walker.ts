// The walk every check shares: its caps (parse nodes, depth), its refusals (a 400 naming the declaration), the
// allow-list of each node's fields, and the sites where names get their schema (qualify.ts).
import { errors } from '../../core/errors.ts';
import { sqlName } from './allowed.ts';
import { isComment, type Token } from './parser.ts';
import type { Fields } from './tree.ts';

export interface TableShape {
  columns: ReadonlySet<string>;
  /** Columns that lead a primary key, unique constraint or index: one index probe finds their rows. */
  indexedLeading: ReadonlySet<string>;
}
export type TableMap = ReadonlyMap<string, TableShape>;

/** An insertion into the text (cut bytes removed first), at a UTF-8 byte offset. */
export interface Site {
  at: number;
  cut: number;
  text: string;
}

export interface CheckerOptions {
  label: string;
  mode: 'condition' | 'function';
  tables: TableMap;
  /** The app's other declared functions (function bodies only). */
  functions: ReadonlySet<string>;
  /** The function being checked: its name and argument names ('' for the unnamed jsonb one). */
  fn?: { name: string; args: readonly string[] };
  tokens: readonly Token[];
  maxNodes: number;
  maxDepth: number;
}

const keySets = new Map<string, Set<string>>();

export abstract class Walker {
  readonly sites: Site[] = [];
  /** The change each site makes to the tree, applied after the checks to compare with the re-parsed text. */
  readonly mutations: Array<() => void> = [];
  readonly reads = new Set<string>();
  readonly writesTo = new Set<string>();
  readonly calls = new Set<string>();
  protected readonly o: CheckerOptions;
  protected readonly code: readonly Token[];
  protected readonly args: ReadonlySet<string>;
  private count = 0;
  private depth = 0;

  constructor(options: CheckerOptions) {
    this.o = options;
    this.code = options.tokens.filter((t) => !isComment(t));
    this.args = new Set(options.fn?.args.filter((a) => a !== ''));
  }

  refuse(message: string): never {
    throw errors.validation(`${this.o.label}: ${message}`);
  }

  protected get where(): string {
    return this.o.mode === 'condition' ? 'a condition' : 'a function body';
  }

  /** Counts nodes read without a walk (the String nodes of a name). */
  protected tally(nodes: number): void {
    this.count += nodes;
    if (this.count > this.o.maxNodes) this.refuse(`the SQL has more than ${this.o.maxNodes} parse nodes; shorten or split it.`);
  }

  /** Counts a node and its depth around `check`: the caps keep this walk's own recursion bounded. */
  protected within<T>(check: () => T): T {
    this.tally(1);
    if (++this.depth > this.o.maxDepth) this.refuse(`the SQL nests deeper than ${this.o.maxDepth} levels; flatten it.`);
    try {
      return check();
    } finally {
      this.depth--;
    }
  }

  /** Refuses fields outside `allowed` (space-separated): a form of the grammar these checks were not written for. */
  protected fields(kind: string, f: Fields, allowed: string): void {
    let set = keySets.get(allowed);
    if (!set) keySets.set(allowed, (set = new Set(allowed.split(' '))));
    const extra = Object.keys(f).find((k) => !set.has(k));
    if (extra !== undefined) this.refuse(`${sqlName(kind)} with '${extra}' cannot be used in ${this.where}; write it more plainly.`);
  }

  protected functionOnly(what: string): void {
    if (this.o.mode === 'condition') {
      this.refuse(`${what} cannot be used in a condition; a condition is one boolean expression, reading other tables only through exists (select 1 from <table> where <indexed column> = <row column>).`);
    }
  }

  /** Puts `public.` before the name at byte offset `at`; `change` makes the same change to the tree. */
  protected qualify(at: number, change: () => void): void {
    this.tokenAt(at);
    this.sites.push({ at, cut: 0, text: 'public.' });
    this.mutations.push(change);
  }

  /** The index of the token starting at byte `at`; a name the parser places elsewhere is refused (fail closed). */
  protected tokenAt(at: number): number {
    let lo = 0;
    let hi = this.code.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const start = this.code[mid]!.start;
      if (start === at) return mid;
      if (start < at) lo = mid + 1;
      else hi = mid - 1;
    }
    return this.refuse('a name could not be located in the text to pin its schema; write the SQL more plainly.');
  }
}
