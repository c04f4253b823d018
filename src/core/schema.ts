import { z } from 'zod';
import type { AnyTool } from './define.ts';

export type JsonSchema = Record<string, unknown> & { properties?: Record<string, JsonSchema>; required?: string[] };

/** JSON Schema of a tool's input as a caller writes it (defaults optional, before coercion). */
export function inputJsonSchema(tool: AnyTool): JsonSchema {
  const { $schema: _drop, ...schema } = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  return schema;
}

export function outputJsonSchema(tool: AnyTool): JsonSchema {
  const { $schema: _drop, ...schema } = z.toJSONSchema(tool.output, { io: 'output', unrepresentable: 'any' }) as JsonSchema;
  return schema;
}

export function pathParams(path: string): string[] {
  return [...path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]!);
}
