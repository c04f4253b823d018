-- App-database migration 9: the declared access of private realtime channels (the schema definition's `channels`,
-- src/schema/channels.ts). One row per topic pattern; an apply's migration replaces them as a whole, and a join of a
-- private channel reads them (src/realtime/channel-access.ts). End users never read this table themselves.
create table if not exists svc_realtime.channel_access (
  pattern text primary key,
  access jsonb not null
);
