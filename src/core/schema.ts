import { z } from 'zod';
import type { AnyTool } from './define.ts';

export type JsonSchema = Record<string, unknown> & { properties?: Record<string, JsonSchema>; required?: string[] };

/** String formats whose name says all that zod's regular expression for them would (about 200 bytes for a uuid). */
const SELF_DESCRIBING_FORMATS = new Set(['uuid', 'email', 'date-time', 'date', 'time', 'uri']);

/**
 * Drops what says nothing: a record's `propertyNames: { type: 'string' }` (every JSON object key is a string), and
 * the pattern beside a well-known `format` (the server validates either way). Agents pay for every byte of tools/list.
 */
const withoutNoise = (ctx: { jsonSchema: Record<string, unknown> }): void => {
  const schema = ctx.jsonSchema;
  const names = schema.propertyNames as Record<string, unknown> | undefined;
  if (names && Object.keys(names).length === 1 && names.type === 'string') delete schema.propertyNames;
  if (typeof schema.format === 'string' && SELF_DESCRIBING_FORMATS.has(schema.format)) delete schema.pattern;
};

/** JSON Schema of a tool's input as a caller writes it (defaults optional, before coercion). */
export function inputJsonSchema(tool: AnyTool): JsonSchema {
  const { $schema: _drop, ...schema } = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any', override: withoutNoise }) as JsonSchema;
  return schema;
}

export function outputJsonSchema(tool: AnyTool): JsonSchema {
  const { $schema: _drop, ...schema } = z.toJSONSchema(tool.output, { io: 'output', unrepresentable: 'any', override: withoutNoise }) as JsonSchema;
  return schema;
}

export function pathParams(path: string): string[] {
  return [...path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]!);
}
