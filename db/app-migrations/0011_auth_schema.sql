-- App-database migration 11: what declared conditions read (src/schema/conditions.ts), as Supabase's policies write it:
-- auth.uid(), the end user of the transaction (null when anonymous), and auth.jwt(), their claims ({} when none), both
-- from the claims the data API sets with set_config(..., true). Each condition is kept as written beside the table's
-- access, for schema_get and the diff.
create schema if not exists auth;
revoke all on schema auth from public;
grant usage on schema auth to svc_anon, svc_user, svc_service;
create or replace function auth.uid() returns uuid
  language sql stable
  as $$ select public.current_user_id() $$;
create or replace function auth.jwt() returns jsonb
  language sql stable
  as $$ select coalesce(nullif(current_setting('request.jwt.claims', true), '')::jsonb, '{}'::jsonb) $$;
revoke all on function auth.uid() from public;
revoke all on function auth.jwt() from public;
grant execute on function auth.uid() to svc_anon, svc_user, svc_service;
grant execute on function auth.jwt() to svc_anon, svc_user, svc_service;
alter table svc_meta.table_access add column if not exists conditions jsonb;
