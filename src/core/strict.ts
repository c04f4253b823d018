import { z } from 'zod';

/**
 * Tool inputs refuse keys they do not declare: an argument an agent misspells or invents (`filter` for `query`)
 * must be a 400 that names it, not a 200 that silently ignored it.
 *
 * Every object of an input schema left in zod's default "strip" mode (`z.object`) becomes strict, at any depth:
 * the top-level arguments and nested option objects alike. User data is untouched because it is never a stripping
 * object: rows and bodies are `z.unknown()`, maps are `z.record()`, and an object meant to carry anything is
 * declared `z.looseObject()` (catchall unknown), which this leaves as it is. Objects already strict keep their own
 * messages. Intersections and lazy schemas are left alone (strict operands of an intersection refuse each other's keys).
 */
export function strictInput<T extends z.ZodType>(schema: T): T {
  return strictDeep(schema) as T;
}

type Def = Record<string, unknown> & { type: string };

function strictDeep(schema: z.ZodType): z.ZodType {
  const def = schema._zod.def as unknown as Def;
  const changes: Record<string, unknown> = {};
  const visit = (key: string) => {
    const inner = def[key] as z.ZodType | undefined;
    if (!inner) return;
    const next = strictDeep(inner);
    if (next !== inner) changes[key] = next;
  };
  switch (def.type) {
    case 'object': {
      const shape = def.shape as Record<string, z.ZodType>;
      let changed = false;
      const nextShape: Record<string, z.ZodType> = {};
      for (const [key, value] of Object.entries(shape)) {
        nextShape[key] = strictDeep(value);
        if (nextShape[key] !== value) changed = true;
      }
      if (changed) changes.shape = nextShape;
      if (def.catchall === undefined) changes.catchall = z.never();
      break;
    }
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'nonoptional':
    case 'readonly':
    case 'catch':
      visit('innerType');
      break;
    case 'pipe':
      visit('in');
      visit('out');
      break;
    case 'array':
      visit('element');
      break;
    case 'record':
      visit('valueType');
      break;
    case 'union': {
      const options = def.options as z.ZodType[];
      const next = options.map(strictDeep);
      if (next.some((o, i) => o !== options[i])) changes.options = next;
      break;
    }
    default:
      return schema;
  }
  if (Object.keys(changes).length === 0) return schema;
  // Property descriptors, not a spread: a default's value is a getter that hands out a fresh copy on each parse.
  const nextDef = Object.defineProperties({}, { ...Object.getOwnPropertyDescriptors(def), ...Object.getOwnPropertyDescriptors(changes) });
  const Constr = (schema._zod as unknown as { constr: new (def: unknown) => z.ZodType }).constr;
  const copy = new Constr(nextDef);
  // Descriptions and other metadata live in the registry, keyed by the instance.
  const meta = z.globalRegistry.get(schema);
  if (meta) z.globalRegistry.add(copy, meta);
  return copy;
}

/**
 * Error map for parsing inputs: an unknown key's message also lists the accepted keys, so the caller can correct
 * the call from the message alone. Starts as zod's own text (`Unrecognized key: "filter"`).
 */
export const unknownKeysMessage: z.core.$ZodErrorMap = (issue) => {
  if (issue.code !== 'unrecognized_keys') return undefined;
  const shape = (issue.inst?._zod.def as { shape?: Record<string, unknown> } | undefined)?.shape;
  const unknown = issue.keys.map((k) => JSON.stringify(k)).join(', ');
  const accepted = shape ? Object.keys(shape) : [];
  const list = accepted.length ? `the accepted keys are ${accepted.join(', ')}` : 'no keys are accepted here';
  return `Unrecognized key${issue.keys.length > 1 ? 's' : ''}: ${unknown}; ${list}`;
};
