-- Bootstrap of every per-app database, run once inside a fresh database by src/apps/app-databases.ts.
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
