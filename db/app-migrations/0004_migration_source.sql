-- App-database migration 4: where a schema migration came from. A clone of a template replays the template's
-- migrations (src/templates/steps.ts); each copy records the template app, its version and the migration's id there,
-- so the new app's history says where it came from and a replay resumed after a crash skips what it already copied.
alter table svc_meta.migrations add column if not exists source jsonb;
create unique index if not exists migrations_source_idx on svc_meta.migrations ((source ->> 'migration_id')) where source is not null;
