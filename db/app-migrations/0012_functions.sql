-- App-database migration 12: declared SQL functions (the schema definition's `functions`, issue 43;
-- docs/design/schema-functions.md). schema_apply creates each as public.<name>, SECURITY INVOKER, and records it here;
-- the data API serves exactly the functions recorded here at /rpc/{name} (never another function of the schema).
-- - declaration: as written in the definition, for schema_get and the diff;
-- - args: [{ name, type, default }] in order (default: the SQL default's text, or null when required); a single unnamed
--   json/jsonb argument is [{ name: '', type: 'jsonb', default: null }];
-- - returns: { kind: 'scalar' | 'row' | 'set' | 'table' | 'void', type?, table?, columns? }: scalar `type`, one row or
--   SETOF of `table` (or SETOF a scalar `type`), RETURNS TABLE `columns` ({ name: type }, in order);
-- - volatility: 'stable' (GET and HEAD allowed, read-only) or 'volatile';
-- - access: who may call it: 'public' (anonymous too), 'authenticated' (end users and keys), 'service' (keys only).
create table if not exists svc_meta.functions (
  name text primary key,
  declaration jsonb not null,
  args jsonb not null,
  returns jsonb not null,
  volatility text not null check (volatility in ('stable', 'volatile')),
  access text not null check (access in ('public', 'authenticated', 'service')),
  checksum text not null
);
