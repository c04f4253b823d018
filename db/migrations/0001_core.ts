import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table accounts (
      id uuid primary key default gen_random_uuid(),
      name text not null,
      created_at timestamptz not null default now()
    );
    create table platform_keys (
      id uuid primary key default gen_random_uuid(),
      account_id uuid not null references accounts(id) on delete cascade,
      key_hash text not null unique,
      hint text not null,
      name text not null,
      created_at timestamptz not null default now()
    );
    create table apps (
      id text primary key,
      account_id uuid not null references accounts(id) on delete cascade,
      name text not null,
      subdomain text not null unique,
      db_name text not null unique,
      -- provisioning: the row exists before its database, so a crash mid-create leaves something to reap
      status text not null default 'provisioning' check (status in ('provisioning', 'ready')),
      created_at timestamptz not null default now()
    );
    create index apps_account_idx on apps(account_id, created_at);
    create table app_signing_keys (
      app_id text not null references apps(id) on delete cascade,
      kid text not null,
      alg text not null,
      public_jwk jsonb not null,
      private_key_sealed text not null,
      created_at timestamptz not null default now(),
      primary key (app_id, kid)
    );
    create table service_keys (
      id uuid primary key default gen_random_uuid(),
      app_id text not null references apps(id) on delete cascade,
      key_hash text not null unique,
      hint text not null,
      name text not null,
      created_at timestamptz not null default now()
    );
    create index service_keys_app_idx on service_keys(app_id);
    create table substrate_keys (
      id uuid primary key default gen_random_uuid(),
      account_id uuid not null references accounts(id) on delete cascade,
      key_hash text not null unique,
      hint text not null,
      name text not null,
      created_at timestamptz not null default now()
    );
    create table suggestions (
      id uuid primary key default gen_random_uuid(),
      account_id uuid references accounts(id) on delete set null,
      category text not null,
      description text not null,
      severity text,
      affected_tool text,
      proposed_solution text,
      source text,
      created_at timestamptz not null default now()
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table suggestions, substrate_keys, service_keys, app_signing_keys, apps, platform_keys, accounts`.execute(db);
}
