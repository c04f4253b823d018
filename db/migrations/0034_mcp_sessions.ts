import { sql, type Kysely } from 'kysely';

/*
 * MCP sessions shared by the api processes (src/transports/mcp-sessions.ts): a session's request may reach any of
 * them, and the one without the session in memory rebuilds it from its row.
 *
 * - `id`: the Mcp-Session-Id, text because it arrives as a header and is looked up before anything validates it.
 * - `toolsets`: the areas the session lists (platform_toolsets_enable appends to them).
 * - `log_level`: what logging/setLevel last set (the spec's levels).
 * - `initialize`: the params of the client's initialize request (protocolVersion, capabilities, clientInfo),
 *   replayed into the rebuilt SDK server so that it knows the client's capabilities (URL elicitation).
 * - `last_seen`: refreshed at most once a minute while the session is used; a session idle for MCP_SESSION_IDLE_MS
 *   is expired on read, and its row deleted when a session is next opened (hence the index); an account's least
 *   recently used sessions beyond 200 are deleted when it opens one more (the account index).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table mcp_sessions (
      id text primary key,
      account_id uuid not null references accounts(id) on delete cascade,
      toolsets text[] not null,
      log_level text not null check (log_level in ('debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency')),
      initialize jsonb not null,
      created_at timestamptz not null default now(),
      last_seen timestamptz not null default now()
    );
    create index mcp_sessions_last_seen_idx on mcp_sessions(last_seen);
    create index mcp_sessions_account_idx on mcp_sessions(account_id, last_seen desc);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table mcp_sessions`.execute(db);
}
