-- App-database migration 8: the capture of row changes for realtime-js's postgres_changes (src/realtime/capture.ts).
-- A table whose definition says `realtime: true` gets the triggers below (src/schema/render.ts). They write each
-- change into svc_realtime.changes only while an api process is reading (a reader seen in the last 30 s) or a
-- subscriber whose connection dropped may come back for what it missed (a position kept in the last 60 s), so a table
-- nobody listens to pays two indexed lookups per statement. Readers poll by transaction id: a change becomes readable
-- once every transaction that started before it has ended, so none is skipped and none is read twice.
create schema if not exists svc_realtime;
revoke all on schema svc_realtime from public;

create table if not exists svc_realtime.changes (
  id bigint generated always as identity primary key,
  xid xid8 not null default pg_current_xact_id(),
  table_name text not null,
  op "char" not null check (op in ('I', 'U', 'D')),
  record jsonb,
  old_record jsonb,
  -- the writing transaction's start: every change of one transaction carries the same
  at timestamptz not null default now()
);
create index if not exists changes_xid_idx on svc_realtime.changes (xid);
create index if not exists changes_at_idx on svc_realtime.changes (at);

-- api processes reading changes (one row each, refreshed every 10 s).
create table if not exists svc_realtime.readers (
  reader text primary key,
  seen_at timestamptz not null default now()
);

-- Where a subscriber's deliveries reached (postgres_changes' catch-up after a dropped connection): a transaction id
-- below which it has every change it may see.
create table if not exists svc_realtime.positions (
  key text primary key,
  xid xid8 not null,
  saved_at timestamptz not null default now()
);
create index if not exists positions_saved_at_idx on svc_realtime.positions (saved_at);

create or replace function svc_realtime.reading() returns boolean
  language sql stable
  as $$ select exists (select 1 from svc_realtime.readers where seen_at > now() - interval '30 seconds')
    or exists (select 1 from svc_realtime.positions where saved_at > now() - interval '60 seconds') $$;

-- Statement-level for inserts and deletes (one insert of all the statement's rows); row-level for updates, which pair
-- each row's old and new values. Security definer: the writing roles get no access to svc_realtime.
create or replace function svc_realtime.capture_insert() returns trigger
  language plpgsql security definer set search_path = pg_catalog
  as $$
begin
  if svc_realtime.reading() then
    insert into svc_realtime.changes (table_name, op, record) select tg_table_name, 'I', to_jsonb(n) from new_rows n;
  end if;
  return null;
end $$;

create or replace function svc_realtime.capture_update() returns trigger
  language plpgsql security definer set search_path = pg_catalog
  as $$
begin
  if svc_realtime.reading() then
    insert into svc_realtime.changes (table_name, op, record, old_record) values (tg_table_name, 'U', to_jsonb(new), to_jsonb(old));
  end if;
  return null;
end $$;

create or replace function svc_realtime.capture_delete() returns trigger
  language plpgsql security definer set search_path = pg_catalog
  as $$
begin
  if svc_realtime.reading() then
    insert into svc_realtime.changes (table_name, op, old_record) select tg_table_name, 'D', to_jsonb(o) from old_rows o;
  end if;
  return null;
end $$;

revoke all on function svc_realtime.capture_insert(), svc_realtime.capture_update(), svc_realtime.capture_delete(), svc_realtime.reading() from public;
