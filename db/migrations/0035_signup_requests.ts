import { sql, type Kysely } from 'kysely';

/*
 * Open sign-ups confirmed by mail (src/identity/signup-requests.ts): where the platform sends mail, a sign-up without
 * an invitation makes no person until the link mailed to the address is followed, so that its answer cannot tell
 * whether the address already has a person.
 *
 * - `password_hash`: argon2id of the password chosen at sign-up; the confirmation asks for it again, so that only the
 *   person who chose it can finish that sign-up (the address's owner cannot be made to confirm someone else's).
 * - `token_hash`: the SHA-256 of the link's token, set by the job that mails it (null until then; a retried mail
 *   replaces it). The row is deleted when confirmed, and expired rows (`expires_at`) when a later sign-up comes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table signup_requests (
      id uuid primary key default gen_random_uuid(),
      email text not null check (email = lower(email)),
      name text not null default '',
      password_hash text not null,
      token_hash text unique,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null
    );
    create index signup_requests_email_idx on signup_requests(email);
    create index signup_requests_expires_idx on signup_requests(expires_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table signup_requests`.execute(db);
}
