// Stored broadcasts of private channels: realtime-js's `persist` (send on vsn 2.0.0, httpSend) keeps a broadcast for
// a while, and a join with `config.broadcast.replay: { since, limit }` first receives the latest ones sent since `since`
// (milliseconds), as Supabase Realtime replays them: private channels only, 10 by default, 25 at most, each with
// `meta: { id, replayed: true }`. Kept in the control database (control migration 45) with the app.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { ControlDatabase } from '../db/types.ts';
import type { BroadcastBody } from './protocol.ts';

/** The longest a broadcast is kept (realtime-js's `persist: true`), and the most `persist: { ttl }` may ask. */
export const MAX_STORE_SECONDS = 3 * 86_400;
export const REPLAY_DEFAULT_LIMIT = 10;
export const REPLAY_MAX_LIMIT = 25;
/** A stored broadcast's payload, as JSON text or bytes. */
export const MAX_STORED_BYTES = 64 * 1024;
/** Unexpired stored broadcasts one app may hold. */
export const MAX_STORED_PER_APP = 10_000;
const PRUNE_EVERY_MS = 60_000;
const MAX_DATE_MS = 8.64e15;

type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

/** realtime-js's persist: `true` keeps a broadcast the longest, `{ ttl }` that many seconds; absent or false: not kept. */
export function parsePersist(value: unknown): Parsed<number | undefined> {
  if (value === undefined || value === null || value === false) return { ok: true, value: undefined };
  if (value === true) return { ok: true, value: MAX_STORE_SECONDS };
  const ttl = typeof value === 'object' && !Array.isArray(value) ? (value as { ttl?: unknown }).ttl : undefined;
  if (ttl === undefined) return { ok: true, value: MAX_STORE_SECONDS };
  if (typeof ttl === 'number' && Number.isInteger(ttl) && ttl >= 1 && ttl <= MAX_STORE_SECONDS) return { ok: true, value: ttl };
  return { ok: false, reason: `persist is true or { ttl: <whole seconds, 1-${MAX_STORE_SECONDS}> }` };
}

/** A join's config.broadcast.replay: `{ since: <ms since the epoch>, limit?: 1-25 }`. */
export function parseReplay(value: unknown): Parsed<{ since: number; limit: number } | undefined> {
  if (value === undefined || value === null) return { ok: true, value: undefined };
  const reason = `config.broadcast.replay is { since: <milliseconds since the epoch>, limit?: 1-${REPLAY_MAX_LIMIT} }`;
  if (typeof value !== 'object' || Array.isArray(value)) return { ok: false, reason };
  const { since, limit = REPLAY_DEFAULT_LIMIT } = value as { since?: unknown; limit?: unknown };
  // At most the latest instant a Date can hold, which Postgres's timestamps hold too.
  if (typeof since !== 'number' || !Number.isFinite(since) || since < 0 || since > MAX_DATE_MS) return { ok: false, reason };
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > REPLAY_MAX_LIMIT) return { ok: false, reason };
  return { ok: true, value: { since, limit } };
}

/** A stored broadcast as a replay sends it. */
export interface Replayed {
  id: string;
  event: string;
  body: BroadcastBody;
}

/** Why a broadcast was not stored: too large (413) or too many kept (429). */
export class StoreRefused extends Error {
  readonly status: 413 | 429;
  constructor(status: 413 | 429, message: string) {
    super(message);
    this.status = status;
  }
}

export class StoredBroadcasts {
  readonly #db: Kysely<ControlDatabase>;
  readonly #log: Logger;
  #lastPrune = 0;

  constructor(db: Kysely<ControlDatabase>, log: Logger) {
    this.#db = db;
    this.#log = log;
  }

  /** Keeps a broadcast of the app's private channel `topic` for `ttl` seconds; its id. Throws StoreRefused. */
  async store(appId: string, topic: string, event: string, body: BroadcastBody, ttl: number): Promise<string> {
    const text = body.kind === 'json' ? JSON.stringify(body.value ?? null) : null;
    const size = body.kind === 'binary' ? body.bytes.length : Buffer.byteLength(text!);
    if (size > MAX_STORED_BYTES) throw new StoreRefused(413, `A stored broadcast's payload is at most ${MAX_STORED_BYTES} bytes; this one is ${size}.`);
    const id = randomUUID();
    const bytes = body.kind === 'binary' ? body.bytes : null;
    // One statement: the count and the insert see the same snapshot, so concurrent stores may pass the cap together by a
    // few, never by many.
    const { rows } = await sql<{ id: string }>`
      insert into realtime_stored (id, app_id, topic, event, payload, bytes, expires_at)
      select ${id}, ${appId}, ${topic}, ${event}, ${text}::jsonb, ${bytes}, clock_timestamp() + make_interval(secs => ${ttl})
       where (select count(*) from (select 1 from realtime_stored where app_id = ${appId} and expires_at > now() limit ${MAX_STORED_PER_APP}) kept) < ${MAX_STORED_PER_APP}
      returning id`.execute(this.#db);
    this.#pruneSometimes();
    if (!rows.length) throw new StoreRefused(429, `The app keeps ${MAX_STORED_PER_APP} stored broadcasts, its most; older ones expire by their ttl.`);
    return id;
  }

  /** The latest `limit` unexpired broadcasts of the topic stored since `since` (ms), oldest first. */
  async replay(appId: string, topic: string, since: number, limit: number): Promise<Replayed[]> {
    const { rows } = await sql<{ id: string; event: string; payload: unknown; bytes: Buffer | null }>`
      select id, event, payload, bytes from realtime_stored
       where app_id = ${appId} and topic = ${topic} and created_at >= to_timestamp(${since}::float8 / 1000) and expires_at > now()
       order by created_at desc limit ${limit}`.execute(this.#db);
    return rows.reverse().map((r) => ({ id: r.id, event: r.event, body: r.bytes ? { kind: 'binary', bytes: r.bytes } : { kind: 'json', value: r.payload } }));
  }

  /** Expired broadcasts go, checked at most once a minute by each process that stores. */
  #pruneSometimes(): void {
    const now = Date.now();
    if (now - this.#lastPrune < PRUNE_EVERY_MS) return;
    this.#lastPrune = now;
    sql`delete from realtime_stored where expires_at < now()`.execute(this.#db).catch((err: unknown) => this.#log.warn({ err }, 'stored broadcasts not pruned'));
  }
}
