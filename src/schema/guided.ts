// Parts of the schema definition the guide documents (conditions, channels, functions, access objects): tools/list shows
// each as any object, so that every session does not pay for their shape, and the definition checks them strictly.
import { z } from 'zod';
import { errors } from '../core/errors.ts';

/** Such a part as tools/list shows it: any object, described in a few words that point to the guide. */
export const guided = (what: string) => z.record(z.string(), z.unknown()).optional().describe(what);

/** A guided list: any array in tools/list, each item checked against its full schema by the definition. */
export const guidedList = (what: string) => z.array(z.unknown()).optional().describe(what);

/** A guided part checked against its full schema; a mismatch is a 400 naming its path under `schema`. */
export function strictly<T extends z.ZodType>(schema: T, value: unknown, path: string): z.output<T> | undefined {
  if (value === undefined) return undefined;
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => ({ path: ['schema', path, ...i.path.map(String)].join('.'), message: i.message }));
  throw errors.validation(`Invalid '${issues[0]!.path}': ${issues[0]!.message}.`, issues);
}

