// The row changes of an app's streamed tables (`realtime: true`), read by each api process that has subscribers for the
// app. The capture triggers (app migration 8) write into svc_realtime.changes while a reader is registered; a reader
// polls by transaction id: it reads the changes of transactions below the oldest one still running (every one of them
// has ended, so what is visible now is all they will ever write), then moves its lower bound there. A change is thus
// read once, and only after its transaction committed, whatever order the transactions commit in.
import type { Logger } from 'pino';
import type { AppDatabases } from '../apps/app-databases.ts';

export type ChangeOp = 'I' | 'U' | 'D';

export interface CapturedChange {
  id: string;
  /** The writing transaction (xid8, as text): positions in the feed are transaction ids. */
  xid: string;
  table: string;
  op: ChangeOp;
  /** The new row (inserts, updates), as to_jsonb made it. */
  record: Record<string, unknown> | null;
  /** The old row (updates, deletes). */
  old: Record<string, unknown> | null;
  /** The writing transaction's start. */
  at: Date;
}

export interface FeedListener {
  /**
   * Changes in the order their transactions became readable. `through`: when the batch ends a range, the position
   * it reaches (every change of a transaction below it has been read); undefined for a page inside a larger range.
   */
  changes(batch: readonly CapturedChange[], through: string | undefined): void;
  /** The feed reads now: changes committed from here on reach the listener (sent once, after the first read). */
  live?(): void;
  /** Reading failed; changes may be late (they are read once it works again, within the retention window). */
  trouble?(err: unknown): void;
}

export interface ChangeFeedsOptions {
  databases: AppDatabases;
  /** This process's name among the readers (svc_realtime.readers). */
  readerId: string;
  /** Pause between reads that found nothing. */
  pollMs: number;
  /** How long changes are kept for readers that fall behind (and catch-up); older ones are deleted. */
  retentionSeconds: number;
  log: Logger;
}

/** Rows read at once; a fuller backlog is read page by page without pausing. */
const PAGE = 500;
/** Changes one catch-up reads at most: after a longer absence the subscriber is told it missed some. */
export const CATCH_UP_MAX = 1000;
/** The reader's heartbeat; the capture triggers stop 30 s after the last (app migration 8). */
const HEARTBEAT_MS = 10_000;
/**
 * Reads that found nothing before a feed polls more slowly (IDLE_FACTOR x pollMs): an app whose tables are quiet costs
 * a quarter of the queries, and its first change after a quiet second waits at most that longer pause.
 */
const IDLE_AFTER = 40;
const IDLE_FACTOR = 4;
const RETRY_MS = 1_000;

const REGISTER_SQL = `insert into svc_realtime.readers (reader) values ($1) on conflict (reader) do update set seen_at = now()`;
const START_SQL = `select pg_snapshot_xmin(pg_current_snapshot())::text as xmin`;
/**
 * One page of readable changes: those of transactions in [lower, upper), after `afterId`. Without an upper bound the
 * snapshot's xmin is it; a page that comes back full keeps that bound, so the following pages read the same set.
 */
const READ_SQL = `
  with s as (select coalesce($2::xid8, pg_snapshot_xmin(pg_current_snapshot())) as upper)
  select s.upper::text as upper, c.id::text as id, c.xid::text as xid, c.table_name, c.op, c.record, c.old_record, c.at
  from s left join lateral (
    select * from svc_realtime.changes where xid >= $1::xid8 and xid < s.upper and id > $3 order by id limit ${PAGE}
  ) c on true`;
const PRUNE_SQL = `with old as (delete from svc_realtime.changes where at < now() - make_interval(secs => $1)),
  positions as (delete from svc_realtime.positions where saved_at < now() - make_interval(secs => $1))
  delete from svc_realtime.readers where seen_at < now() - interval '1 minute'`;
/**
 * How long a subscriber whose connection dropped may come back for what it missed: its position is kept (and the
 * capture runs on, app migration 8's reading()) for this long after the drop.
 */
export const CATCH_UP_WINDOW_SECONDS = 60;
/** A position, taken once (two joins cannot both resume from it), within the window. */
const TAKE_POSITION_SQL = `delete from svc_realtime.positions where key = $1 and saved_at > now() - make_interval(secs => ${CATCH_UP_WINDOW_SECONDS}) returning xid::text as xid`;

const SAVE_POSITION_SQL = `insert into svc_realtime.positions (key, xid) values ($1, $2::xid8)
  on conflict (key) do update set xid = excluded.xid, saved_at = now()`;
const UNREGISTER_SQL = `delete from svc_realtime.readers where reader = $1`;
/** What a subscriber missed: the changes from its position up to the feed's (all of them ended), the newest kept. */
const CATCH_UP_SQL = `select id::text as id, xid::text as xid, table_name, op, record, old_record, at from (
    select * from svc_realtime.changes where xid >= $1::xid8 and xid < $2::xid8 order by id desc limit ${CATCH_UP_MAX + 1}
  ) recent order by recent.id`;

/** A catch-up asked for: served by the feed's loop between two reads, so that nothing falls between it and them. */
interface CatchUp {
  /** Undefined: nothing to catch up on, only the position. */
  from: string | undefined;
  done: (missed: CapturedChange[] | undefined, position: string) => void;
}

interface ReadRow extends ChangeRow {
  upper: string;
}

interface ChangeRow {
  id: string | null;
  xid: string;
  table_name: string;
  op: ChangeOp;
  record: Record<string, unknown> | null;
  old_record: Record<string, unknown> | null;
  at: Date;
}

/** One app's feed in this process: registered as a reader while it has listeners. */
class AppFeed {
  readonly #appId: string;
  readonly #opts: ChangeFeedsOptions;
  readonly listeners = new Set<FeedListener>();
  #lower: string | undefined;
  #upper: string | null = null;
  #afterId = '0';
  #timer: NodeJS.Timeout | undefined;
  #beat = 0;
  #stopped = false;
  #live = false;
  #catchUps: CatchUp[] = [];
  /** Reads in a row that found no change. */
  #empty = 0;

  constructor(appId: string, opts: ChangeFeedsOptions) {
    this.#appId = appId;
    this.#opts = opts;
  }

  get live(): boolean {
    return this.#live;
  }

  start(): void {
    this.#schedule(0);
  }

  /**
   * The changes from `from` up to the position where the feed's next read starts, handed to `done` with that position
   * (undefined when the retention no longer holds them all, or `from` is past it); a listener added in `done` then
   * misses nothing and sees nothing twice.
   */
  catchUp(from: string | undefined, done: CatchUp['done']): void {
    this.#catchUps.push({ from, done });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#sql()
      .query(UNREGISTER_SQL, [this.#opts.readerId])
      .catch(() => undefined);
  }

  #sql() {
    return this.#opts.databases.sql(this.#appId);
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => void this.#tick(), ms);
    this.#timer.unref();
  }

  async #tick(): Promise<void> {
    let more = false;
    try {
      if (this.#lower === undefined) await this.#register();
      else if (Date.now() - this.#beat >= HEARTBEAT_MS) await this.#heartbeat();
      if (this.#catchUps.length && this.#upper === null) await this.#serveCatchUps();
      more = await this.#read();
      if (!this.#live && !this.#stopped) {
        this.#live = true;
        for (const l of this.listeners) l.live?.();
      }
    } catch (err) {
      this.#opts.log.warn({ err: String(err), app_id: this.#appId }, 'realtime changes could not be read; retrying');
      for (const l of this.listeners) l.trouble?.(err);
      return this.#schedule(RETRY_MS);
    }
    if (more) return this.#schedule(0);
    this.#schedule(this.#empty > IDLE_AFTER ? this.#opts.pollMs * IDLE_FACTOR : this.#opts.pollMs);
  }

  /** Registered first, then the lower bound: every transaction that starts after the registration captures. */
  async #register(): Promise<void> {
    const sql = this.#sql();
    await sql.query(REGISTER_SQL, [this.#opts.readerId]);
    const { rows } = await sql.query<{ xmin: string }>(START_SQL);
    this.#lower = rows[0]!.xmin;
    this.#beat = Date.now();
  }

  async #heartbeat(): Promise<void> {
    const sql = this.#sql();
    await sql.query(REGISTER_SQL, [this.#opts.readerId]);
    await sql.query(PRUNE_SQL, [this.#opts.retentionSeconds]);
    this.#beat = Date.now();
  }

  async #serveCatchUps(): Promise<void> {
    const lower = this.#lower!;
    for (const ask of this.#catchUps.splice(0)) {
      if (ask.from === undefined || BigInt(ask.from) >= BigInt(lower)) {
        ask.done([], lower);
        continue;
      }
      const { rows } = await this.#sql().query<ChangeRow>(CATCH_UP_SQL, [ask.from, lower]);
      const missed = rows.map(changeOf);
      ask.done(rows.length > CATCH_UP_MAX ? undefined : missed, lower);
    }
  }

  /** One page; true when the page was full (more to read at once). */
  async #read(): Promise<boolean> {
    const { rows } = await this.#sql().query<ReadRow>(READ_SQL, [this.#lower, this.#upper, this.#afterId]);
    const upper = rows[0]!.upper;
    const batch = rows.filter((r) => r.id !== null).map(changeOf);
    const full = batch.length === PAGE;
    this.#empty = batch.length ? 0 : this.#empty + 1;
    if (batch.length) for (const l of this.listeners) l.changes(batch, full ? undefined : upper);
    if (full) {
      this.#upper = upper;
      this.#afterId = batch.at(-1)!.id;
      return true;
    }
    this.#lower = upper;
    this.#upper = null;
    this.#afterId = '0';
    return false;
  }
}

function changeOf(r: ChangeRow): CapturedChange {
  return { id: r.id!, xid: r.xid, table: r.table_name, op: r.op, record: r.record, old: r.old_record, at: r.at };
}

/** The feeds of this process, one per app with listeners. */
export class ChangeFeeds {
  readonly #opts: ChangeFeedsOptions;
  readonly #feeds = new Map<string, AppFeed>();

  constructor(opts: ChangeFeedsOptions) {
    this.#opts = opts;
  }

  /** Listens to the app's changes until the returned function is called; the last listener stops the feed. */
  subscribe(appId: string, listener: FeedListener): () => void {
    let feed = this.#feeds.get(appId);
    if (!feed) {
      feed = new AppFeed(appId, this.#opts);
      this.#feeds.set(appId, feed);
      feed.start();
    } else if (feed.live) {
      listener.live?.();
    }
    feed.listeners.add(listener);
    const current = feed;
    return () => {
      current.listeners.delete(listener);
      if (current.listeners.size || this.#feeds.get(appId) !== current) return;
      this.#feeds.delete(appId);
      void current.stop();
    };
  }

  /** A catch-up on the app's feed (AppFeed.catchUp), which must have a listener already. */
  catchUp(appId: string, from: string | undefined, done: CatchUp['done']): void {
    this.#feeds.get(appId)?.catchUp(from, done);
  }

  /** A subscriber's saved position, taken (so two joins cannot both resume from it), if recent enough. */
  async takePosition(appId: string, key: string): Promise<string | undefined> {
    const { rows } = await this.#opts.databases.sql(appId).query<{ xid: string }>(TAKE_POSITION_SQL, [key]);
    return rows[0]?.xid;
  }

  /** A subscriber's connection dropped: where its deliveries reached, kept for the catch-up window (and the capture runs on). */
  async savePosition(appId: string, key: string, xid: string): Promise<void> {
    await this.#opts.databases.sql(appId).query(SAVE_POSITION_SQL, [key, xid]);
  }

  async close(): Promise<void> {
    const feeds = [...this.#feeds.values()];
    this.#feeds.clear();
    await Promise.all(feeds.map((f) => f.stop()));
  }
}
