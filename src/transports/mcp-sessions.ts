// MCP sessions shared by every api process: a session's durable state is a row of the control database
// (db/migrations/0034_mcp_sessions.ts), so its requests may land on any process behind a load balancer; a process
// that has no transport for a session rebuilds one from the row (resumeSession).
//
// Bound to one process, and so not shared: an open GET SSE stream, and a server-to-client request awaiting its answer
// (URL elicitation), live on the process holding that stream. An answer POSTed to another process cannot reach the
// request waiting for it, which then ends as a refusal when it times out (elicitUrl in mcp.ts). Hence the README's
// advice: session affinity (on Mcp-Session-Id, or a cookie) for elicitation, and for nothing else.
import { sql, type Kysely } from 'kysely';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { InitializeRequest, LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import { errors } from '../core/errors.ts';
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
}

const IDLE_SECONDS = MCP_SESSION_IDLE_MS / 1000;

/** Open sessions one account keeps; opening one more ends its least recently used. */
export const MAX_SESSIONS_PER_ACCOUNT = 200;

/** The rows of MCP sessions (mcp_sessions): what every api process reads on each request of a session. */
export class McpSessions {
  readonly #db: Kysely<ControlDatabase>;

  constructor(db: Kysely<ControlDatabase>) {
    this.#db = db;
  }

  /**
   * Records a new session; the rows of expired sessions go then (opening is rare next to requests), and so do the
   * account's least recently used ones beyond MAX_SESSIONS_PER_ACCOUNT (their clients get 404 and initialize again,
   * as the protocol has them do), so that no account can pile up rows.
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
    await this.#db.deleteFrom('mcp_sessions').where('last_seen', '<', sql<Date>`now() - make_interval(secs => ${IDLE_SECONDS})`).execute();
    await sql`delete from mcp_sessions where account_id = ${session.accountId} and id not in (
      select id from mcp_sessions where account_id = ${session.accountId} order by last_seen desc, created_at desc limit ${MAX_SESSIONS_PER_ACCOUNT})`.execute(this.#db);
  }

  /** The live session `id` (not ended, not idle past MCP_SESSION_IDLE_MS), marking it used; undefined otherwise. */
  async find(id: string): Promise<StoredSession | undefined> {
    const row = await this.#db
      .selectFrom('mcp_sessions')
      .select(['account_id', 'toolsets', 'log_level', 'initialize', sql<boolean>`last_seen < now() - make_interval(secs => ${TOUCH_AFTER_SECONDS})`.as('stale')])
      .where('id', '=', id)
      .where('last_seen', '>', sql<Date>`now() - make_interval(secs => ${IDLE_SECONDS})`)
      .executeTakeFirst();
    if (!row) return undefined;
    if (row.stale) await this.#db.updateTable('mcp_sessions').set({ last_seen: sql`now()` }).where('id', '=', id).execute();
    return { id, accountId: row.account_id, toolsets: row.toolsets, logLevel: row.log_level, initialize: row.initialize as SessionInitialize };
  }

  /** Adds the areas the session lacks, after the ones it has (atomically, as growth on another process may race); its toolsets then. */
  async grow(id: string, areas: readonly string[]): Promise<string[]> {
    const row = await this.#db
      .updateTable('mcp_sessions')
      .set({ toolsets: sql<string[]>`toolsets || array(select a from unnest(${[...areas]}::text[]) as a where a <> all(toolsets))` })
      .where('id', '=', id)
      .returning('toolsets')
      .executeTakeFirst();
    if (!row) throw errors.notFound('MCP session', 'Initialize a new MCP session.');
    return row.toolsets;
  }

  async setLogLevel(id: string, level: LoggingLevel): Promise<void> {
    await this.#db.updateTable('mcp_sessions').set({ log_level: level }).where('id', '=', id).execute();
  }

  /** Ends the session for every process (DELETE /mcp); the others answer 404 for it from then on. */
  async end(id: string): Promise<void> {
    await this.#db.deleteFrom('mcp_sessions').where('id', '=', id).execute();
  }
}

/**
 * Brings a new transport, connected to `server`, to the state the session's own transport reached at initialize:
 * the stored initialize request is replayed into it, so the SDK itself marks it initialized with the session's id
 * (its sessionIdGenerator must return that id) and tells the server the client's capabilities (canElicitUrl).
 *
 * The SDK (1.32) has no public way to create a transport for an existing session (typescript-sdk pull requests 1668
 * and 1786 proposed one). The only private member used is the node transport's web-standard delegate, whose public
 * handleRequest takes a fetch Request, needing no Node request and response. If an SDK upgrade changes that, this
 * throws, and test/unit/mcp-session-resume.test.ts fails.
 */
export async function resumeSession(server: Server, transport: StreamableHTTPServerTransport, initialize: SessionInitialize): Promise<void> {
  const delegate = (transport as unknown as { _webStandardTransport?: unknown })._webStandardTransport;
  if (!(delegate instanceof WebStandardStreamableHTTPServerTransport)) {
    throw new Error('The MCP SDK changed: StreamableHTTPServerTransport has no web-standard delegate to resume a session with.');
  }
  await server.connect(transport);
  const replay = new Request('http://session.resume/mcp', {
    method: 'POST',
    headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: initialize }),
  });
  const answer = await delegate.handleRequest(replay);
  // The answer (the initialize result, as an SSE event) is for no one; reading it to its end lets the transport finish the stream.
  await answer.text();
  if (!answer.ok || transport.sessionId === undefined) {
    throw new Error(`The MCP SDK refused to resume a session: initialize replay answered ${answer.status}.`);
  }
}
