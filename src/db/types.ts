// The control database's type: generated from db/migrations into schema.ts by scripts/db-types.ts, checked by
// test/integration/db-types.test.ts. Every area queries the control database as Kysely<ControlDatabase>.
export type { DB as ControlDatabase } from './schema.ts';
