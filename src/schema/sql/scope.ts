// Which names a column reference can mean. Postgres binds an unqualified column to the innermost FROM entry that has
// it, and a SQL function's argument only when no column matches, both silently; the checks refuse the cases where
// that silence changes the meaning (a column in two entries, an argument that is also a column).

/** One FROM entry: a table, a WITH query, a sub-select or a function, by the name SQL refers to it with. */
export interface Entry {
  /** The alias, or the table's name when it has none. */
  name: string;
  /** Its columns, or null when the checks cannot know them (a function in FROM without column names). */
  columns: ReadonlySet<string> | null;
  /** The app table it reads, if it is one. */
  table?: string;
}

/** One level of names: a statement's FROM entries and the WITH queries it can see; parent is the enclosing level. */
export class Scope {
  readonly entries: Entry[] = [];
  readonly ctes = new Map<string, ReadonlySet<string> | null>();
  readonly parent: Scope | undefined;

  constructor(parent?: Scope) {
    this.parent = parent;
  }

  /** The visible WITH query of this name: its columns (null: unknown), or undefined when there is none. */
  cte(name: string): ReadonlySet<string> | null | undefined {
    for (let s: Scope | undefined = this; s; s = s.parent) {
      if (s.ctes.has(name)) return s.ctes.get(name);
    }
    return undefined;
  }

  /** The entry of this name in an enclosing level (not this one). */
  outerEntry(name: string): Entry | undefined {
    for (let s = this.parent; s; s = s.parent) {
      const found = s.entries.find((e) => e.name === name);
      if (found) return found;
    }
    return undefined;
  }

  /** Every visible entry, innermost first. */
  visible(): Entry[] {
    const out: Entry[] = [];
    for (let s: Scope | undefined = this; s; s = s.parent) out.push(...s.entries);
    return out;
  }

  /** The columns of this level's entries together (for `select *`), or null when one is unknown. */
  allColumns(): Set<string> | null {
    const out = new Set<string>();
    for (const entry of this.entries) {
      if (entry.columns === null) return null;
      for (const c of entry.columns) out.add(c);
    }
    return out;
  }
}

/** How a refusal names an entry: "bookings (b)", or "bookings" when it has no alias. */
export function describeEntry(entry: Entry): string {
  return entry.table !== undefined && entry.table !== entry.name ? `${entry.table} (${entry.name})` : entry.name;
}
