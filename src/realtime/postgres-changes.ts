// postgres_changes for realtime-js's channels: a join's bindings checked against the app's streamed tables (echoed with
// ids, in order), and each captured change delivered to the channels whose bindings it meets and whose subscriber may
// see it. One feed per app in this process; each batch is judged once per table and subscriber group (a role and its
// claims), however many channels that subscriber has.
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { CatalogCache } from '../schema/catalog-cache.ts';
import type { TableInfo } from '../schema/catalog.ts';
import type { CapturedChange, ChangeFeeds, ChangeOp } from './capture.ts';
import { FilterError, matches, parseFilter, valueKind, type Condition, type ValueKind } from './filters.ts';
import type { RowVisibility, Viewer } from './visibility.ts';

export type ChangeEvent = '*' | 'INSERT' | 'UPDATE' | 'DELETE';

/** A binding as the join reply echoes it (realtime-js compares event, schema, table and filter, then keeps the id). */
export interface BindingReply {
  id: number;
  event: ChangeEvent;
  schema: string;
  table?: string;
  filter?: string;
}

export interface Binding {
  reply: BindingReply;
  /** The tables it covers (every streamed table when the binding names none). */
  tables: Set<string>;
  conditions: Condition[];
  kinds: Map<string, ValueKind>;
}

/** The payload of a `postgres_changes` message. */
export interface ChangePayload {
  ids: number[];
  data: {
    schema: 'public';
    table: string;
    commit_timestamp: string;
    type: 'INSERT' | 'UPDATE' | 'DELETE';
    columns: { name: string; type: string }[];
    record: Record<string, unknown>;
    old_record: Record<string, unknown>;
    errors: null;
  };
}

export interface ChangeSink {
  send(payload: ChangePayload): void;
  /** Changes committed from now on arrive. */
  live(): void;
  /** The changes could not be read for a while (they come once reading works again). */
  trouble(message: string): void;
  /** When the client was last heard from (epoch ms): what was sent well before then has surely arrived. */
  lastHeard(): number;
}

export type Prepared = { ok: true; bindings: Binding[] } | { ok: false; reason: string };

const TYPE_OF: Record<ChangeOp, ChangePayload['data']['type']> = { I: 'INSERT', U: 'UPDATE', D: 'DELETE' };
const EVENTS = new Set(['*', 'INSERT', 'UPDATE', 'DELETE']);
/** Bindings one channel may hold. */
export const MAX_BINDINGS = 100;
let nextId = 1;

interface Subscription {
  bindings: Binding[];
  viewer: () => Viewer;
  sink: ChangeSink;
  /** Where its position is saved when its connection drops (a resumable subscription). */
  key: string | undefined;
  /**
   * Where its deliveries reached, and when: [time, position] as the position moved (the first: its join's). A frame
   * sent is not a frame received, so a drop saves the position of a while before the client was last heard.
   */
  positions: Array<[number, string]>;
  /** Changes of transactions below this were handed over by its catch-up. */
  minXid: bigint | undefined;
}

/** What makes a subscription resumable: the end user's session (its JWT's session_id) and the channel's topic. */
export interface Resume {
  topic: string;
  session: string;
}

function resumeKey(appId: string, resume: Resume, bindings: Binding[]): string {
  const asked = bindings.map((b) => [b.reply.event, b.reply.schema, b.reply.table ?? null, b.reply.filter ?? null]);
  return createHash('sha256').update(JSON.stringify([appId, resume.topic, resume.session, asked])).digest('base64url');
}

interface AppEntry {
  /** Subscriptions the deliveries reach. */
  subs: Set<Subscription>;
  /** Every subscription, those still catching up included: the feed runs while there is one. */
  members: Set<Subscription>;
  /** The feed reads: a new subscriber is live at once. */
  live: boolean;
  /** The delivery of the batches read so far. */
  queue: Promise<void>;
  stop: () => void;
}

export interface PostgresChangesDeps {
  feeds: ChangeFeeds;
  visibility: RowVisibility;
  catalogs: CatalogCache;
  log: Logger;
}

export class PostgresChanges {
  readonly #d: PostgresChangesDeps;
  readonly #apps = new Map<string, AppEntry>();

  constructor(deps: PostgresChangesDeps) {
    this.#d = deps;
  }

  /** A join's `config.postgres_changes`, checked against the app's tables: the bindings, or why the join is refused. */
  async prepare(appId: string, input: unknown): Promise<Prepared> {
    if (!Array.isArray(input)) return refused('postgres_changes must be a list of bindings');
    if (input.length > MAX_BINDINGS) return refused(`a channel takes at most ${MAX_BINDINGS} postgres_changes bindings`);
    const catalog = await this.#d.catalogs.refresh(appId);
    const streamed = [...catalog.values()].filter(streams);
    const bindings: Binding[] = [];
    for (const raw of input) {
      const made = bindingOf(raw, catalog, streamed);
      if (typeof made === 'string') return refused(made);
      bindings.push(made);
    }
    return { ok: true, bindings };
  }

  /**
   * Delivers the changes the bindings meet and the viewer may see, until the returned function is called. With `resume`
   * (an end user's session and the channel's topic) the subscription is resumable: where its deliveries reached is
   * saved, and a later subscription of the same session, topic and bindings first gets what was missed in between.
   * The returned function takes whether to forget that position (yes unless the connection dropped): it is written
   * only then, once, so that a live subscription costs no write per batch.
   */
  subscribe(appId: string, bindings: Binding[], viewer: () => Viewer, sink: ChangeSink, resume?: Resume): (forget?: boolean) => void {
    const sub: Subscription = { bindings, viewer, sink, key: resume && resumeKey(appId, resume, bindings), minXid: undefined, positions: [] };
    const entry = this.#entry(appId);
    entry.members.add(sub);
    if (sub.key) {
      void this.#resume(appId, entry, sub);
    } else {
      entry.subs.add(sub);
      if (entry.live) queueMicrotask(() => sink.live());
    }
    return (forget = true) => {
      entry.members.delete(sub);
      entry.subs.delete(sub);
      const position = sub.key && !forget ? receivedPosition(sub) : undefined;
      const saved = position === undefined ? undefined : this.#d.feeds.savePosition(appId, sub.key!, position).catch((err: unknown) => this.#warn(appId, err, 'a realtime position could not be saved'));
      if (entry.members.size || this.#apps.get(appId) !== entry) return;
      this.#apps.delete(appId);
      // The position before the reader goes: the capture must not pause between the two.
      if (saved) void saved.then(() => entry.stop());
      else entry.stop();
    };
  }

  #entry(appId: string): AppEntry {
    const existing = this.#apps.get(appId);
    if (existing) return existing;
    const entry: AppEntry = { subs: new Set(), members: new Set(), live: false, queue: Promise.resolve(), stop: () => undefined };
    entry.stop = this.#d.feeds.subscribe(appId, {
      // One batch after the other, so that a subscriber sees changes in the order they were read.
      changes: (batch, through) =>
        void (entry.queue = entry.queue.then(async () => {
          await this.#deliver(appId, entry.subs, batch);
          if (through !== undefined) for (const s of entry.subs) if (s.key) movePosition(s, through);
        })),
      live: () => {
        entry.live = true;
        entry.subs.forEach((s) => s.sink.live());
      },
      trouble: () => entry.members.forEach((s) => s.sink.trouble('The database changes could not be read for a moment; they arrive once they can.')),
    });
    this.#apps.set(appId, entry);
    return entry;
  }

  /**
   * A resumable subscription joins the deliveries once the feed has handed it what it missed since its saved position
   * (from the feed's loop, between two reads): from then on it gets every batch, and skips those below its position.
   */
  async #resume(appId: string, entry: AppEntry, sub: Subscription): Promise<void> {
    const from = await this.#d.feeds.takePosition(appId, sub.key!).catch((err: unknown) => this.#warn(appId, err, 'a realtime position could not be read'));
    if (!entry.members.has(sub)) return;
    this.#d.feeds.catchUp(appId, from ?? undefined, (missed, position) => {
      if (!entry.members.has(sub)) return;
      sub.minXid = BigInt(position);
      entry.subs.add(sub);
      entry.queue = entry.queue.then(async () => {
        if (missed === undefined) sub.sink.trouble('More changes happened while this channel was away than are kept for it: fetch the rows again.');
        else if (missed.length) await this.#deliver(appId, new Set([sub]), missed, true);
        movePosition(sub, position);
      });
      sub.sink.live();
    });
  }

  #warn(appId: string, err: unknown, message: string): undefined {
    this.#d.log.warn({ err: String(err), app_id: appId }, message);
    return undefined;
  }

  /** `catchingUp`: changes a subscription missed, below its position (live deliveries skip those). */
  async #deliver(appId: string, subs: Set<Subscription>, batch: readonly CapturedChange[], catchingUp = false): Promise<void> {
    try {
      const catalog = await this.#d.catalogs.get(appId);
      const byTable = Map.groupBy(batch, (c) => c.table);
      for (const [table, changes] of byTable) {
        const info = catalog.get(table) ?? (await this.#d.catalogs.refresh(appId)).get(table);
        if (!info) continue;
        const listening = [...subs].filter((s) => s.bindings.some((b) => b.tables.has(table)));
        if (listening.length) await this.#deliverTable(appId, info, changes, listening, catchingUp);
      }
    } catch (err) {
      this.#d.log.warn({ err: String(err), app_id: appId }, 'realtime changes could not be delivered');
    }
  }

  /** One visibility check per subscriber group over the table's changes (new rows, and old rows of updates). */
  async #deliverTable(appId: string, info: TableInfo, changes: CapturedChange[], subs: Subscription[], catchingUp: boolean): Promise<void> {
    const judged = changes.map((c) => c.record ?? c.old ?? {});
    // An update's old row is judged too (after the new rows): whoever may see it gets it whole.
    const oldAt = new Map<number, number>();
    changes.forEach((c, i) => c.op === 'U' && c.old && oldAt.set(i, judged.length + oldAt.size));
    const rows = [...judged, ...[...oldAt.keys()].map((i) => changes[i]!.old!)];
    const groups = [...Map.groupBy(subs, (s) => {
      const v = s.viewer();
      return `${v.role}\u0000${v.claims}`;
    }).values()];
    const seen = await this.#d.visibility.visibleTo(appId, info.name, groups.map((g) => g[0]!.viewer()), rows);
    const columns = info.columns.map((c) => ({ name: c.name, type: c.isArray ? `_${c.udt}` : c.udt }));
    groups.forEach((group, g) => {
      const visible = seen[g]!;
      const mine = [...visible].filter((i) => i < judged.length).sort((x, y) => x - y);
      for (const i of mine) {
        const change = changes[i]!;
        const oldSeen = change.op === 'D' || (oldAt.has(i) && visible.has(oldAt.get(i)!));
        const payload = messageOf(info.name, change, columns, oldSeen ? change.old ?? {} : keyOf(change.old, info.primaryKey));
        const xid = BigInt(change.xid);
        for (const sub of group) {
          if (!catchingUp && sub.minXid !== undefined && xid < sub.minXid) continue;
          const ids = sub.bindings.filter((b) => meets(b, info.name, change)).map((b) => b.reply.id);
          if (ids.length) sub.sink.send({ ids, data: payload });
        }
      }
    });
  }
}

/** How long before the client was last heard a frame counts as received; positions are kept for this long and more. */
const RECEIVED_GRACE_MS = 5_000;
const POSITION_HISTORY_MS = 120_000;

function movePosition(sub: Subscription, position: string): void {
  const now = Date.now();
  sub.positions.push([now, position]);
  // Kept: the first (the join's) and a window of the latest.
  while (sub.positions.length > 2 && sub.positions[1]![0] < now - POSITION_HISTORY_MS) sub.positions.splice(1, 1);
}

/**
 * The position a dropped subscription resumes from: the newest reached at least RECEIVED_GRACE_MS before the client was
 * last heard, else its join's. Changes after it may come again (at least once), none is lost.
 */
function receivedPosition(sub: Subscription): string | undefined {
  const before = sub.sink.lastHeard() - RECEIVED_GRACE_MS;
  let found = sub.positions[0]?.[1];
  for (const [at, position] of sub.positions) if (at <= before) found = position;
  return found;
}

/** Whether a table's changes can reach channels: its definition says `realtime: true`, and it has a primary key. */
export function streams(table: TableInfo): boolean {
  return table.realtime === true && table.primaryKey.length > 0;
}

const refused = (reason: string): Prepared => ({ ok: false, reason: `InvalidPostgresChanges: ${reason}` });

/** One binding of a join, or why it cannot be served. */
function bindingOf(raw: unknown, catalog: Map<string, TableInfo>, streamed: TableInfo[]): Binding | string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'each binding is an object { event, schema, table?, filter? }';
  const { event, schema, table, filter } = raw as Record<string, unknown>;
  if (typeof event !== 'string' || !EVENTS.has(event.toUpperCase())) return `event must be one of *, INSERT, UPDATE, DELETE`;
  if (schema !== 'public' && schema !== '*') return `schema '${String(schema).slice(0, 63)}' has no streamed tables: only 'public' streams`;
  if (table !== undefined && table !== null && typeof table !== 'string') return 'table must be a string';
  if (filter !== undefined && filter !== null && typeof filter !== 'string') return 'filter must be a string';
  const reply: BindingReply = { id: nextId++, event: event as ChangeEvent, schema };
  if (table) reply.table = table;
  if (filter) reply.filter = filter;
  let tables: TableInfo[];
  if (table && table !== '*') {
    const info = catalog.get(table);
    if (!info) return `table '${table.slice(0, 63)}' does not exist`;
    if (!info.realtime) return `table '${table}' does not stream: apply its definition with "realtime": true`;
    tables = [info];
  } else {
    tables = streamed;
  }
  let conditions: Condition[] = [];
  const kinds = new Map<string, ValueKind>();
  if (filter) {
    if (tables.length !== 1) return 'a filter needs one table';
    try {
      conditions = parseFilter(filter);
    } catch (err) {
      return `filter: ${(err as FilterError).message}`;
    }
    const info = tables[0]!;
    for (const c of conditions) {
      const column = info.columns.find((col) => col.name === c.column);
      if (!column) return `filter: column '${c.column.slice(0, 63)}' is not in table '${info.name}'`;
      kinds.set(c.column, valueKind(column.udt, column.isArray));
    }
  }
  return { reply, tables: new Set(tables.map((t) => t.name)), conditions, kinds };
}

/** Whether a binding takes a change: its event and table, and its filter on the row (the old row of a delete). */
function meets(b: Binding, table: string, change: CapturedChange): boolean {
  if (!b.tables.has(table)) return false;
  if (b.reply.event !== '*' && b.reply.event.toUpperCase() !== TYPE_OF[change.op]) return false;
  return b.conditions.length === 0 || matches(b.conditions, change.record ?? change.old ?? {}, b.kinds);
}

/** The primary key of a row: what a subscriber who may not see the old row learns of it. */
function keyOf(row: Record<string, unknown> | null, pk: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(pk.map((k) => [k, row?.[k] ?? null]));
}

function messageOf(table: string, change: CapturedChange, columns: ChangePayload['data']['columns'], old: Record<string, unknown>): ChangePayload['data'] {
  return {
    schema: 'public',
    table,
    commit_timestamp: change.at.toISOString(),
    type: TYPE_OF[change.op],
    columns,
    record: change.op === 'D' ? {} : change.record ?? {},
    old_record: change.op === 'I' ? {} : old,
    errors: null,
  };
}
