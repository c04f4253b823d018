import { sql, type Kysely } from 'kysely';

/**
 * People on the platform (src/identity, src/accounts): a person signs in with a password and/or OpenID Connect
 * identities, holds server-side sessions, and is a member of accounts with a role; platform keys carry the person who
 * created them and a role no higher than theirs; every account keeps an audit log.
 *
 * - `persons.email` is stored lower-cased (unique); `password_hash` is argon2id, null for OIDC-only persons.
 * - `person_identities`: (issuer, subject) of a linked OpenID Connect identity.
 * - `account_members.role`: owner > admin > developer > viewer (src/core/caller.ts).
 * - `sessions.id_hash`: the SHA-256 of the opaque cookie value; the value itself is never stored.
 * - `person_tokens`: single-use e-mail verification and password reset tokens, hashed likewise.
 * - `invitations`: by e-mail or link, accepted by a signed-in person; the token is hashed.
 * - `audit_log`: who (person, key or the platform) did what to which resource, from which address.
 * - `substrate_users.person_id`: each member is their own substrate user inside the account.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table persons (
      id uuid primary key default gen_random_uuid(),
      email text not null unique check (email = lower(email)),
      name text not null default '',
      password_hash text,
      email_verified_at timestamptz,
      created_at timestamptz not null default now()
    );
    create table person_identities (
      issuer text not null,
      subject text not null,
      person_id uuid not null references persons(id) on delete cascade,
      email text,
      created_at timestamptz not null default now(),
      primary key (issuer, subject)
    );
    create index person_identities_person_idx on person_identities(person_id);
    create table account_members (
      account_id uuid not null references accounts(id) on delete cascade,
      person_id uuid not null references persons(id) on delete cascade,
      role text not null check (role in ('owner', 'admin', 'developer', 'viewer')),
      created_at timestamptz not null default now(),
      primary key (account_id, person_id)
    );
    create index account_members_person_idx on account_members(person_id);
    create table sessions (
      id_hash text primary key,
      person_id uuid not null references persons(id) on delete cascade,
      account_id uuid not null references accounts(id) on delete cascade,
      created_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now(),
      expires_at timestamptz not null,
      ip text,
      user_agent text
    );
    create index sessions_person_idx on sessions(person_id);
    create table person_tokens (
      token_hash text primary key,
      person_id uuid not null references persons(id) on delete cascade,
      purpose text not null check (purpose in ('verify_email', 'reset_password')),
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      used_at timestamptz
    );
    create index person_tokens_person_idx on person_tokens(person_id, purpose);
    create table invitations (
      id uuid primary key default gen_random_uuid(),
      account_id uuid not null references accounts(id) on delete cascade,
      email text check (email = lower(email)),
      role text not null check (role in ('owner', 'admin', 'developer', 'viewer')),
      token_hash text not null unique,
      invited_by uuid references persons(id) on delete set null,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      accepted_at timestamptz,
      accepted_by uuid references persons(id) on delete set null,
      revoked_at timestamptz
    );
    create index invitations_account_idx on invitations(account_id, created_at);
    create table audit_log (
      id bigint generated always as identity primary key,
      account_id uuid not null references accounts(id) on delete cascade,
      actor_kind text not null check (actor_kind in ('person', 'key', 'platform')),
      actor_id text,
      action text not null,
      resource_type text not null,
      resource_id text,
      ip text,
      details jsonb not null default '{}',
      created_at timestamptz not null default now()
    );
    create index audit_log_account_idx on audit_log(account_id, created_at desc, id desc);
    alter table platform_keys
      add column created_by uuid references persons(id) on delete set null,
      add column role text not null default 'owner' check (role in ('owner', 'admin', 'developer', 'viewer'));
    alter table substrate_users add column person_id uuid references persons(id) on delete cascade;
    create unique index substrate_users_person_idx on substrate_users(account_id, person_id) where person_id is not null;
    alter table substrate_actions add column decided_by uuid references persons(id) on delete set null;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table substrate_actions drop column decided_by;
    drop index substrate_users_person_idx;
    alter table substrate_users drop column person_id;
    alter table platform_keys drop column created_by, drop column role;
    drop table audit_log, invitations, person_tokens, sessions, account_members, person_identities, persons;
  `.execute(db);
}
