// What requests cause, gathered in memory and written in batches: bytes served (the bandwidth_bytes meter), the
// apps that were asked anything (their idle-pause clock), and the end users seen this month (monthly active users).
// Written per request, each of these would be one more write on a hot row; batched, a flush is three statements.
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import { isUuid } from '../core/uuid.ts';
import type { ControlDatabase } from '../db/types.ts';

export const BANDWIDTH_METER = 'bandwidth_bytes';
export const MAU_METER = 'monthly_active_users';

/** How often the gathered traffic is written (and at stop). A crash loses at most this much of it. */
const FLUSH_INTERVAL_MS = 5000;
/** Past this many distinct end users waiting, a flush starts at once (bounds memory under a flood of sign-ups). */
const MAX_PENDING_USERS = 50_000;

/** Where one HTTP response's byte count comes from: the socket's counter before and after it (headers included). */
export interface MeteredSocket {
  bytesWritten: number;
}

export class TrafficMeter {
  readonly #db: Kysely<ControlDatabase>;
  readonly #log: Logger;
  #bytes = new Map<string, number>();
  #touched = new Set<string>();
  #users = new Map<string, Set<string>>();
  #pendingUsers = 0;
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();

  constructor(db: Kysely<ControlDatabase>, log: Logger) {
    this.#db = db;
    this.#log = log;
  }

  start(): void {
    this.#timer ??= setInterval(() => void this.flush(), FLUSH_INTERVAL_MS).unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }

  /** The app was asked something: its idle clock restarts (at the next flush). */
  touch(appId: string): void {
    this.#touched.add(appId);
  }

  served(appId: string, bytes: number): void {
    if (bytes > 0) this.#bytes.set(appId, (this.#bytes.get(appId) ?? 0) + bytes);
  }

  /** Counts the bytes of the response on `socket` from now until it finishes (or the client leaves). */
  meterResponse(appId: string, socket: MeteredSocket | null, finished: (done: () => void) => void): void {
    if (!socket) return;
    const before = socket.bytesWritten;
    finished(() => this.served(appId, socket.bytesWritten - before));
  }

  /** An end user of the app was issued a token or used one. */
  activeUser(appId: string, userId: string): void {
    if (!isUuid(userId)) return;
    let users = this.#users.get(appId);
    if (!users) this.#users.set(appId, (users = new Set()));
    if (users.has(userId)) return;
    users.add(userId);
    if (++this.#pendingUsers >= MAX_PENDING_USERS) void this.flush();
  }

  /** Writes what was gathered; one flush at a time, each waiting for the one before. */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(() => this.#write()).catch((err: unknown) => this.#log.error({ err }, 'writing traffic meters failed'));
    return this.#flushing;
  }

  async #write(): Promise<void> {
    const bytes = this.#bytes;
    const touched = this.#touched;
    const users = this.#users;
    this.#bytes = new Map();
    this.#touched = new Set();
    this.#users = new Map();
    this.#pendingUsers = 0;
    if (bytes.size) await this.#writeBandwidth(bytes);
    if (touched.size) {
      await sql`update apps set last_request_at = now() where id = any(${[...touched]}::text[])`.execute(this.#db);
    }
    if (users.size) await this.#writeActiveUsers(users);
  }

  /** Apps deleted meanwhile are skipped (the join), rather than failing the whole batch. */
  async #writeBandwidth(bytes: Map<string, number>): Promise<void> {
    await sql`
      insert into usage_daily (app_id, meter, day, quantity)
      select a.id, ${BANDWIDTH_METER}, (now() at time zone 'utc')::date, b.quantity
      from unnest(${[...bytes.keys()]}::text[], ${[...bytes.values()]}::bigint[]) as b(app_id, quantity)
      join apps a on a.id = b.app_id
      on conflict (app_id, meter, day) do update set quantity = usage_daily.quantity + excluded.quantity
    `.execute(this.#db);
  }

  /** First sightings of the month only: a user already counted this month adds nothing to the meter. */
  async #writeActiveUsers(users: Map<string, Set<string>>): Promise<void> {
    const appIds: string[] = [];
    const userIds: string[] = [];
    for (const [appId, set] of users) {
      for (const userId of set) {
        appIds.push(appId);
        userIds.push(userId);
      }
    }
    await sql`
      with seen as (
        insert into monthly_active_users (app_id, month, user_id)
        select a.id, date_trunc('month', now() at time zone 'utc')::date, s.user_id
        from unnest(${appIds}::text[], ${userIds}::uuid[]) as s(app_id, user_id)
        join apps a on a.id = s.app_id
        on conflict do nothing
        returning app_id
      )
      insert into usage_daily (app_id, meter, day, quantity)
      select app_id, ${MAU_METER}, (now() at time zone 'utc')::date, count(*) from seen group by app_id
      on conflict (app_id, meter, day) do update set quantity = usage_daily.quantity + excluded.quantity
    `.execute(this.#db);
  }
}
