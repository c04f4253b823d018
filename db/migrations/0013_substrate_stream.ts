import { sql, type Kysely } from 'kysely';

/**
 * The substrate change stream: a trigger on each covered table NOTIFYs `svc_substrate` with `{ org, op, tbl, id }`
 * (no row data) when the change commits, so every api instance LISTENing fans it out to its sockets of that org.
 * Stream tickets are single-use and short-lived; only their hash is stored.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table substrate_ws_tickets (
      ticket_hash text primary key,
      account_id uuid not null references accounts(id) on delete cascade,
      expires_at timestamptz not null,
      used_at timestamptz
    );
    create index substrate_ws_tickets_expiry_idx on substrate_ws_tickets(expires_at);

    create function svc_substrate_notify() returns trigger language plpgsql as $$
    declare
      row_user uuid := case when tg_op = 'DELETE' then old.user_id else new.user_id end;
      row_id text := case when tg_op = 'DELETE' then old.id else new.id end;
      org uuid;
    begin
      select account_id into org from substrate_users where id = row_user;
      if org is not null then
        perform pg_notify('svc_substrate', json_build_object('org', org, 'op', lower(tg_op), 'tbl', tg_argv[0], 'id', row_id)::text);
      end if;
      return null;
    end $$;
  `.execute(db);
  for (const [table, name] of [
    ['substrate_entities', 'entities'],
    ['substrate_actions', 'action_ledger'],
    ['substrate_decisions', 'decisions'],
    ['substrate_commitments', 'commitments'],
    ['substrate_learnings', 'learnings'],
  ] as const) {
    await sql`create trigger ${sql.raw(`${table}_notify`)} after insert or update or delete on ${sql.table(table)}
      for each row execute function svc_substrate_notify(${sql.lit(name)})`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['substrate_entities', 'substrate_actions', 'substrate_decisions', 'substrate_commitments', 'substrate_learnings']) {
    await sql`drop trigger ${sql.raw(`${table}_notify`)} on ${sql.table(table)}`.execute(db);
  }
  await sql`drop function svc_substrate_notify(); drop table substrate_ws_tickets;`.execute(db);
}
