import { sql, type Kysely } from 'kysely';

/**
 * The platform as an OAuth 2.1 authorization server for MCP clients (src/identity/oauth.ts): a client registers
 * itself, a signed-in person consents, and the client then holds tokens that act for that person in one account.
 *
 * - `oauth_clients`: dynamically registered clients; `metadata` is their registration as accepted (public clients:
 *   no secret is issued, PKCE binds each code to the client that asked for it).
 * - `oauth_codes`: an authorization request from the consent page on: `consent_hash` is the hash of the page's
 *   anti-forgery value, bound to the browser session (`session_hash`) that saw it; approving it sets `code_hash`, the
 *   hash of the single-use code, and shortens `expires_at`; `used_at` is when the code was exchanged. A row's id is
 *   the grant id of the tokens that code yields.
 * - `oauth_tokens`: access and refresh tokens, stored only as their SHA-256 (`token_hash`); every token of one grant
 *   shares `grant_id`, so revoking any of them, or a replayed code or refresh token, ends the whole grant. A rotated
 *   refresh token keeps its row (`rotated_at`) until it expires, so that presenting it again is recognised.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table oauth_clients (
      client_id text primary key,
      metadata jsonb not null,
      created_at timestamptz not null default now()
    );
    create table oauth_codes (
      id uuid primary key default gen_random_uuid(),
      consent_hash text not null unique,
      session_hash text not null references sessions(id_hash) on delete cascade,
      code_hash text unique,
      client_id text not null references oauth_clients(client_id) on delete cascade,
      person_id uuid not null references persons(id) on delete cascade,
      account_id uuid not null references accounts(id) on delete cascade,
      redirect_uri text not null,
      code_challenge text not null,
      state text,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      used_at timestamptz
    );
    create index oauth_codes_person_idx on oauth_codes(person_id, expires_at);
    create table oauth_tokens (
      token_hash text primary key,
      kind text not null check (kind in ('access', 'refresh')),
      grant_id uuid not null,
      client_id text not null references oauth_clients(client_id) on delete cascade,
      person_id uuid not null references persons(id) on delete cascade,
      account_id uuid not null references accounts(id) on delete cascade,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      rotated_at timestamptz
    );
    create index oauth_tokens_grant_idx on oauth_tokens(grant_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table oauth_tokens, oauth_codes, oauth_clients`.execute(db);
}
