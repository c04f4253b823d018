-- App-database migration 5: the schema definition's group access (src/schema/render.ts): end users reach the rows of a
-- group (a workspace, a team) they belong to through a membership table.
-- - svc_meta.table_access: access 'group', and its settings { members, column, key, write } in group_access.
-- - svc_groups: the functions those policies call, one per membership table and key column (security definer: a
--   membership table is itself under row-level security, and a policy reading it would recurse). End users need USAGE
--   on the schema to call them from their policies; nothing else lives there.
alter table svc_meta.table_access drop constraint if exists table_access_access_check;
alter table svc_meta.table_access add constraint table_access_access_check check (access in ('user', 'public', 'service', 'group'));
alter table svc_meta.table_access add column if not exists group_access jsonb;
create schema if not exists svc_groups;
revoke all on schema svc_groups from public;
grant usage on schema svc_groups to svc_user;
