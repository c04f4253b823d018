import type { AnyTool } from '../../src/core/define.ts';

/** Schema tools: schema_apply, schema_get, schema_migrations. */
export const schemaTools: readonly AnyTool[] = [];
