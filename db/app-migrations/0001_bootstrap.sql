-- App-database migration 1: the bootstrap of every app database (until versioned migrations, db/app-bootstrap.sql),
-- run by src/apps/app-migrations.ts in a fresh database only: a database the previous release bootstrapped is
-- recorded as already at version 1 (see the runner). Never edit an applied migration; add the next file instead.
-- The roles svc_anon, svc_user and svc_service are cluster-wide and created beforehand.
create extension if not exists vector;
create extension if not exists pgcrypto;

-- The platform's private schema: never exposed by the data API.
create schema svc_meta;
revoke all on schema svc_meta from public;

create table svc_meta.migrations (
  id bigint generated always as identity primary key,
  name text not null,
  statements jsonb not null,
  checksum text not null,
  applied_at timestamptz not null default now()
);

-- The end user of the current transaction, from the JWT claims the data API sets with set_config(..., true).
create function public.current_user_id() returns uuid
  language sql stable
  as $$ select nullif(nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub', '')::uuid $$;

revoke all on schema public from public;
revoke create on schema public from public;
grant usage on schema public to svc_anon, svc_user, svc_service;
grant execute on function public.current_user_id() to svc_anon, svc_user, svc_service;
alter default privileges in schema public grant select on tables to svc_anon;
alter default privileges in schema public grant select, insert, update, delete on tables to svc_user, svc_service;
alter default privileges in schema public grant usage, select on sequences to svc_user, svc_service;

-- Table-level access option of the schema definition (see README, "Row-level security"), per user table.
create table svc_meta.table_access (
  table_name text primary key,
  access text not null check (access in ('user', 'public', 'service'))
);

-- Fills user_id on insert: an end user always writes rows as themself; the service key may set any user_id.
create function svc_meta.fill_user_id() returns trigger
  language plpgsql
  as $$
begin
  if public.current_user_id() is not null then
    new.user_id := public.current_user_id();
  end if;
  return new;
end $$;

-- End users of this app: never exposed by the data API.
create schema svc_auth;
revoke all on schema svc_auth from public;

create table svc_auth.users (
  id uuid primary key default gen_random_uuid(),
  email text not null,
  password_hash text not null,
  created_at timestamptz not null default now(),
  last_sign_in_at timestamptz
);
create unique index users_email_key on svc_auth.users (lower(email));

create table svc_auth.refresh_tokens (
  id bigint generated always as identity primary key,
  user_id uuid not null references svc_auth.users(id) on delete cascade,
  token_hash text not null unique,
  -- every rotation of one sign-in shares a family; reuse of a rotated token revokes the whole family
  family uuid not null,
  expires_at timestamptz not null,
  revoked_at timestamptz,
  created_at timestamptz not null default now()
);
create index refresh_tokens_family_idx on svc_auth.refresh_tokens (family);
