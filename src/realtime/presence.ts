// Presence of one channel topic, in Phoenix's shapes (what @supabase/phoenix's Presence reads): the state
// { key: { metas: [{ phx_ref, ...payload }] } } and diffs { joins, leaves } of the same form. Each api process holds the
// presences of its own sockets and learns the others' from their diffs and states (hub.ts), so the presences here are
// kept by the process that holds them: a process that stops being heard is dropped whole.

export type Meta = { phx_ref: string } & Record<string, unknown>;
export type PresenceMap = Record<string, { metas: Meta[] }>;
export interface PresenceDiff {
  joins: PresenceMap;
  leaves: PresenceMap;
}

/** An object without a prototype: presence keys are the client's, and may be "__proto__". */
const bare = <T>(): Record<string, T> => Object.create(null) as Record<string, T>;

function add(map: PresenceMap, key: string, meta: Meta): void {
  (map[key] ??= { metas: [] }).metas.push(meta);
}

export const emptyDiff = (): PresenceDiff => ({ joins: bare(), leaves: bare() });

export const isEmptyDiff = (d: PresenceDiff): boolean => Object.keys(d.joins).length === 0 && Object.keys(d.leaves).length === 0;

interface Entry {
  key: string;
  meta: Meta;
}

export class TopicPresences {
  /** process id -> phx_ref -> its key and meta. */
  readonly #byProcess = new Map<string, Map<string, Entry>>();

  get empty(): boolean {
    return this.#byProcess.size === 0;
  }

  /** Every presence, of every process. */
  state(): PresenceMap {
    const out = bare<{ metas: Meta[] }>();
    for (const entries of this.#byProcess.values()) for (const { key, meta } of entries.values()) add(out, key, meta);
    return out;
  }

  /** The presences `process` holds. */
  held(process: string): PresenceMap {
    const out = bare<{ metas: Meta[] }>();
    for (const { key, meta } of this.#byProcess.get(process)?.values() ?? []) add(out, key, meta);
    return out;
  }

  /** Applies a diff of `process`'s presences; returns what actually changed (a join already known, a leave unknown, drop out). */
  apply(process: string, diff: PresenceDiff): PresenceDiff {
    const changed = emptyDiff();
    let entries = this.#byProcess.get(process);
    for (const [key, { metas }] of Object.entries(diff.leaves)) {
      for (const meta of metas) {
        if (entries?.get(meta.phx_ref)?.key !== key) continue;
        entries.delete(meta.phx_ref);
        add(changed.leaves, key, meta);
      }
    }
    for (const [key, { metas }] of Object.entries(diff.joins)) {
      for (const meta of metas) {
        if (typeof meta?.phx_ref !== 'string' || entries?.has(meta.phx_ref)) continue;
        if (!entries) this.#byProcess.set(process, (entries = new Map()));
        entries.set(meta.phx_ref, { key, meta });
        add(changed.joins, key, meta);
      }
    }
    if (entries?.size === 0) this.#byProcess.delete(process);
    return changed;
  }

  /** Makes `state` the whole of `process`'s presences (its answer to a state request); returns the difference. */
  replace(process: string, state: PresenceMap): PresenceDiff {
    const leaves = this.held(process);
    const known = new Set([...(this.#byProcess.get(process)?.keys() ?? [])]);
    const wanted = new Set(Object.values(state).flatMap(({ metas }) => metas.map((m) => m.phx_ref)));
    // What stays is neither left nor joined.
    for (const [key, entry] of Object.entries(leaves)) {
      entry.metas = entry.metas.filter((m) => !wanted.has(m.phx_ref));
      if (!entry.metas.length) delete leaves[key];
    }
    const joins = bare<{ metas: Meta[] }>();
    for (const [key, { metas }] of Object.entries(state)) for (const meta of metas) if (!known.has(meta.phx_ref)) add(joins, key, meta);
    return this.apply(process, { joins, leaves });
  }

  /** Forgets every presence of `process`; returns their leaves. */
  drop(process: string): PresenceDiff {
    return this.apply(process, { joins: bare(), leaves: this.held(process) });
  }

  /** The processes holding presences here. */
  processes(): string[] {
    return [...this.#byProcess.keys()];
  }
}
