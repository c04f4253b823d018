import { sql, type Kysely } from 'kysely';

/*
 * The change stream per person (issue 30, the console): a substrate is each person's own, yet every socket of an
 * account got the frames of every member's substrate (their ids and timing). The NOTIFY payload now names the row's
 * substrate user (`usr`, read by the api processes only; frames keep the spec's { org, op, tbl, id }), and a ticket
 * records the substrate user it was minted for, so a socket gets its own user's changes alone. Tickets minted before
 * (60 s at most) have none and keep the account-wide stream until they are spent.
 */
/** The trigger function of 0013, its payload naming the row's substrate user (`usr`) or, going down, not. */
const notifyFunction = (withUser: boolean) => sql`
  create or replace function svc_substrate_notify() returns trigger language plpgsql as $$
  declare
    row_user uuid := case when tg_op = 'DELETE' then old.user_id else new.user_id end;
    row_id text := case when tg_op = 'DELETE' then old.id else new.id end;
    org uuid;
  begin
    select account_id into org from substrate_users where id = row_user;
    if org is not null then
      perform pg_notify('svc_substrate', json_build_object('org', org, ${sql.raw(withUser ? "'usr', row_user, " : '')}'op', lower(tg_op), 'tbl', tg_argv[0], 'id', row_id)::text);
    end if;
    return null;
  end $$`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table substrate_ws_tickets add column substrate_user_id uuid references substrate_users(id) on delete cascade`.execute(db);
  await notifyFunction(true).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await notifyFunction(false).execute(db);
  await sql`alter table substrate_ws_tickets drop column substrate_user_id`.execute(db);
}
