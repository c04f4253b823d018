// The control database's Kysely types (src/db/schema.ts) are generated from db/migrations; a migration changed
// without regenerating them fails here, with the line that differs.
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { controlTypes, SCHEMA_FILE } from '../../scripts/db-types.ts';
import { CLUSTER_URL } from '../helpers/db.ts';

it('src/db/schema.ts is what npm run db:types generates from the migrations', async () => {
  expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(await controlTypes(CLUSTER_URL));
}, 60_000);
