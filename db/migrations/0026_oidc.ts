import { sql, type Kysely } from 'kysely';

/**
 * OpenID Connect sign-in of people (src/identity/oidc.ts): one row per sign-in under way, from GET /dashboard/oidc/start
 * until its callback takes it (once) or it expires.
 * - `state_hash`: the SHA-256 of the `state` the provider sends back; a forged or replayed state finds no row.
 * - `binding_hash`: the SHA-256 of the value of the browser's short-lived cookie svc_oidc: the callback must come back
 *   to the browser that started it (no login CSRF with an attacker's code).
 * - `nonce`, `code_verifier`: the ID token's expected nonce and the PKCE verifier, sent to the provider only at the
 *   code exchange.
 * - `redirect`: the path of this origin the browser goes to once signed in.
 * - `invitation_hash`: the SHA-256 of an invitation token a new person signs up with.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table oidc_signins (
      state_hash text primary key,
      binding_hash text not null,
      nonce text not null,
      code_verifier text not null,
      redirect text not null,
      invitation_hash text,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null
    );
    create index oidc_signins_expiry_idx on oidc_signins (expires_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table oidc_signins`.execute(db);
}
