import { sql, type Kysely } from 'kysely';

/**
 * The credential a stream ticket was minted with (a platform or substrate key, or the app whose function asked), so
 * that the socket it opens closes once that credential is revoked or deleted (src/transports/ws.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table substrate_ws_tickets add column credential_kind text, add column credential_id text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table substrate_ws_tickets drop column credential_kind, drop column credential_id`.execute(db);
}
