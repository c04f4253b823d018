import { sql, type Kysely } from 'kysely';

/**
 * An app linked to a substrate user of its owner: its functions (ctx.substrate) and its service key (POST
 * /v1/{app_id}/substrate/actions/propose) propose for that user, as an agent, with source_app_id set.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table apps add column substrate_user_id uuid references substrate_users(id) on delete set null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table apps drop column substrate_user_id`.execute(db);
}
