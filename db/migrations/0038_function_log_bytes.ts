import { sql, type Kysely } from 'kysely';

/*
 * The size of a function_logs row's large fields (console output as JSON text, error and path, in bytes), written with
 * the row: functions_logs bounds each answer by bytes (src/functions/logs.ts) by summing it, so a read need not render
 * every row's console to text to learn how much of it fits. Rows written before stay null and are measured when read
 * (they are replaced by newer ones as each function's newest 1,000 are kept).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table function_logs add column bytes integer`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table function_logs drop column bytes`.execute(db);
}
