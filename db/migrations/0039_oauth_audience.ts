import { sql, type Kysely } from 'kysely';

/*
 * MCP authorization 2026-07-28 (src/identity/oauth.ts):
 * - `oauth_tokens.resource`: the audience a token was issued for (RFC 8707), the platform's `{base}/mcp` when it was
 *   issued; /mcp accepts only its own. Tokens issued before stay null and count as /mcp tokens, the one resource the
 *   platform ever issued them for; refreshing one records the audience on the new pair.
 * - `oauth_clients.document_expires_at`: a client whose client_id is the https URL of its metadata document (Client ID
 *   Metadata Documents) keeps its row, since codes and tokens refer to it, with the document as last fetched; past this
 *   time it is fetched again before use. Null for a client registered through /register.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table oauth_tokens add column resource text;
    alter table oauth_clients add column document_expires_at timestamptz;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table oauth_tokens drop column resource;
    alter table oauth_clients drop column document_expires_at;
  `.execute(db);
}
