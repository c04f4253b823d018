// MCP sessions of the 2025-11-25 revision (and earlier), shared by every api process: a session's durable state is a
// row of the control database (db/migrations/0034_mcp_sessions.ts), so its requests may land on any process behind a
// load balancer; a process that has no transport for a session rebuilds one from the row (resumeSession). Each process
// caches the rows it read while it hears the control database's notices (PgNotices): every change to a row (toolsets
// grown, a log level, the session ended or expired) is announced, so a cached row is dropped at once everywhere, and a
// request of a busy session costs no database read. The 2026-07-28 revision has no sessions and reads nothing here.
//
// Bound to one process, and so not shared: an open GET SSE stream, its replayable events (mcp-events.ts), and a
// server-to-client request awaiting its answer (URL elicitation), live on the process holding that stream. An answer
// POSTed to another process cannot reach the request waiting for it, which then ends as a refusal when it times out
// (elicitUrl in mcp.ts). Hence the advice of docs/operations.md: session affinity (on Mcp-Session-Id, or a cookie) for
// elicitation and stream resumption, and for nothing else.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { InitializeRequest, LoggingLevel, Server, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import { errors } from '../core/errors.ts';
import type { PgNotices } from '../db/notices.ts';
import type { ControlDatabase } from '../db/types.ts';

/** Sessions a client abandoned without DELETE expire after this long without a request. */
export const MCP_SESSION_IDLE_MS = 30 * 60_000;

/**
 * last_seen is written at most this often per session: a busy session must not write on every request. A session
 * may so expire up to this much before MCP_SESSION_IDLE_MS has passed since its last request.
 */
const TOUCH_AFTER_SECONDS = 60;

/** The params of the client's initialize request that a rebuilt server needs (its capabilities, for elicitation). */
export type SessionInitialize = Pick<InitializeRequest['params'], 'protocolVersion' | 'capabilities' | 'clientInfo'>;

/** A session as any api process needs it to serve the session's requests. */
export interface StoredSession {
  id: string;
  accountId: string;
  /** The areas the session lists, in the order they were added. */
  toolsets: string[];
  logLevel: LoggingLevel;
  initialize: SessionInitialize;
  /** The resource URIs the session subscribed to (resources/subscribe). */
  subscriptions: string[];
}

const IDLE_SECONDS = MCP_SESSION_IDLE_MS / 1000;

/** Resource URIs one session may subscribe to. */
export const MAX_SUBSCRIPTIONS = 100;

/** Open sessions one account keeps; opening one more ends its least recently used. */
export const MAX_SESSIONS_PER_ACCOUNT = 200;

/** The channel on which every change to a session's row is announced, with the session's id. */
const CHANNEL = 'svc_mcp_sessions';

/** A row as this process cached it, and when it last marked the session used. */
interface Cached {
  session: StoredSession;
  touchedAt: number;
  usedAt: number;
}

/** The rows of MCP sessions (mcp_sessions): what an api process needs to serve a session's requests. */
export class McpSessions {
  readonly #db: Kysely<ControlDatabase>;
  readonly #notices: PgNotices;
  readonly #cache = new Map<string, Cached>();

  constructor(db: Kysely<ControlDatabase>, notices: PgNotices) {
    this.#db = db;
    this.#notices = notices;
    notices.subscribe(CHANNEL, { notice: (id) => this.#cache.delete(id), lost: () => this.#cache.clear() });
  }

  /**
   * Records a new session; the rows of expired sessions go then (opening is rare next to requests), and so do the
   * account's least recently used ones beyond MAX_SESSIONS_PER_ACCOUNT (their clients get 404 and initialize again,
   * as the protocol has them do), so that no account can pile up rows. Every process hears of the rows that went.
   */
  async open(session: StoredSession): Promise<void> {
    await this.#db
      .insertInto('mcp_sessions')
      .values({
        id: session.id,
        account_id: session.accountId,
        toolsets: session.toolsets,
        log_level: session.logLevel,
        initialize: JSON.stringify(session.initialize),
      })
      .execute();
    await sql`with gone as (delete from mcp_sessions where last_seen < now() - make_interval(secs => ${IDLE_SECONDS})
        or (account_id = ${session.accountId} and id not in (select id from mcp_sessions where account_id = ${session.accountId}
          order by last_seen desc, created_at desc limit ${MAX_SESSIONS_PER_ACCOUNT}))
        returning id)
      select pg_notify(${CHANNEL}, id::text) from gone`.execute(this.#db);
  }

  /**
   * The live session `id` (not ended, not idle past MCP_SESSION_IDLE_MS), marking it used; undefined otherwise. Read
   * from this process's cache while it hears the notices, else (or when `fresh`) from the row.
   */
  async find(id: string, opts: { use: boolean; fresh?: boolean } = { use: true }): Promise<StoredSession | undefined> {
    const now = Date.now();
    const cached = opts.fresh ? undefined : this.#cache.get(id);
    if (cached && this.#notices.listening && now - cached.usedAt < MCP_SESSION_IDLE_MS) {
      if (!opts.use) return cached.session;
      cached.usedAt = now;
      if (now - cached.touchedAt > TOUCH_AFTER_SECONDS * 1000) {
        cached.touchedAt = now;
        // Marked used in the background: the request does not wait for it, and a failed write only ages the session.
        void this.#db.updateTable('mcp_sessions').set({ last_seen: sql`now()` }).where('id', '=', id).execute().catch(() => undefined);
      }
      return cached.session;
    }
    const row = await this.#db
      .selectFrom('mcp_sessions')
      .select(['account_id', 'toolsets', 'log_level', 'initialize', 'subscriptions', sql<boolean>`last_seen < now() - make_interval(secs => ${TOUCH_AFTER_SECONDS})`.as('stale')])
      .where('id', '=', id)
      .where('last_seen', '>', sql<Date>`now() - make_interval(secs => ${IDLE_SECONDS})`)
      .executeTakeFirst();
    if (!row) return undefined;
    if (row.stale && opts.use) await this.#db.updateTable('mcp_sessions').set({ last_seen: sql`now()` }).where('id', '=', id).execute();
    const session = {
      id,
      accountId: row.account_id,
      toolsets: row.toolsets,
      logLevel: row.log_level,
      initialize: row.initialize as SessionInitialize,
      subscriptions: row.subscriptions,
    };
    if (this.#notices.listening) this.#cache.set(id, { session, touchedAt: now, usedAt: now });
    return session;
  }

  /** Adds the areas the session lacks, after the ones it has (atomically, as growth on another process may race); its toolsets then. */
  async grow(id: string, areas: readonly string[]): Promise<string[]> {
    const rows = await this.#announced(id, sql<{ toolsets: string[] }>`with grown as (update mcp_sessions
        set toolsets = toolsets || array(select a from unnest(${[...areas]}::text[]) as a where a <> all(toolsets))
        where id = ${id} returning toolsets)
      select toolsets, pg_notify(${CHANNEL}, ${id}) from grown`);
    if (!rows[0]) throw errors.notFound('MCP session', 'Initialize a new MCP session.');
    return rows[0].toolsets;
  }

  /**
   * Adds (or removes) a resource URI to the session's subscriptions; a session keeps at most MAX_SUBSCRIPTIONS.
   * Returns false when the session already has that many and the URI is not among them.
   */
  async subscribe(id: string, uri: string, subscribed: boolean): Promise<boolean> {
    const rows = await this.#announced(id, subscribed
      ? sql<{ id: string }>`with set as (update mcp_sessions
            set subscriptions = case when ${uri} = any(subscriptions) then subscriptions else subscriptions || ${uri}::text end
            where id = ${id} and (${uri} = any(subscriptions) or cardinality(subscriptions) < ${MAX_SUBSCRIPTIONS}) returning id)
          select id, pg_notify(${CHANNEL}, ${id}) from set`
      : sql<{ id: string }>`with set as (update mcp_sessions set subscriptions = array_remove(subscriptions, ${uri}::text)
            where id = ${id} returning id)
          select id, pg_notify(${CHANNEL}, ${id}) from set`);
    return rows.length > 0;
  }

  async setLogLevel(id: string, level: LoggingLevel): Promise<void> {
    await this.#announced(id, sql`with set as (update mcp_sessions set log_level = ${level} where id = ${id} returning id)
      select pg_notify(${CHANNEL}, ${id}) from set`);
  }

  /** Ends the session for every process (DELETE /mcp); the others answer 404 for it from then on. */
  async end(id: string): Promise<void> {
    await this.#announced(id, sql`with gone as (delete from mcp_sessions where id = ${id} returning id) select pg_notify(${CHANNEL}, ${id}) from gone`);
  }

  /**
   * Runs a change of session `id`'s row that announces itself (a row it returns is a notice sent), and answers once
   * this process heard that notice (PgNotices.echoed); its cached row goes at once.
   */
  async #announced<Row>(id: string, change: RawBuilder<Row>): Promise<Row[]> {
    const { rows } = await this.#notices.echoed(
      CHANNEL,
      async () => {
        const result = await change.execute(this.#db);
        this.#cache.delete(id);
        return result;
      },
      (result) => (result.rows.length > 0 ? [id] : []),
    );
    return rows;
  }
}

/**
 * Brings a new transport, connected to `server`, to the state the session's own transport reached at initialize:
 * the stored initialize request is replayed into it through its public handleRequest, so the SDK itself marks it
 * initialized with the session's id (its sessionIdGenerator must return that id) and tells the server the client's
 * capabilities (canElicitUrl). test/unit/mcp-session-resume.test.ts keeps this true across SDK upgrades.
 */
export async function resumeSession(server: Server, transport: WebStandardStreamableHTTPServerTransport, initialize: SessionInitialize): Promise<void> {
  await server.connect(transport);
  const replay = new Request('http://session.resume/mcp', {
    method: 'POST',
    headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: initialize }),
  });
  const answer = await transport.handleRequest(replay);
  // The answer (the initialize result) is for no one; reading it to its end lets the transport finish the stream.
  await answer.text();
  if (!answer.ok || transport.sessionId === undefined) {
    throw new Error(`The MCP SDK refused to resume a session: initialize replay answered ${answer.status}.`);
  }
}
