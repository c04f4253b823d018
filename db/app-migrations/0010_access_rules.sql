-- App-database migration 10: access by rules (src/schema/render.ts): readers and writers combined, several owner
-- columns, a shared group; and the `authenticated` mode (any signed-in end user reads). svc_meta.table_access keeps
-- access 'rules' with its settings in `rules`, as a group's live in group_access.
alter table svc_meta.table_access drop constraint if exists table_access_access_check;
alter table svc_meta.table_access add constraint table_access_access_check check (access in ('user', 'public', 'authenticated', 'service', 'group', 'rules'));
alter table svc_meta.table_access add column if not exists rules jsonb;
