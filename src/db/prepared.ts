// Statements of the hottest paths (a key's lookup, an account's apps) built and compiled by Kysely once per process
// instead of on every request: building and compiling cost 30-40 us each, more than the round trip's own CPU.
import type { CompiledQuery, Compilable, Kysely } from 'kysely';

/** A placeholder a statement is built with, replaced by the run's value at its position among the parameters. */
const placeholder = (index: number): string => `\u0000prepared:${index}`;

/**
 * Compiles `build(placeholders...)` once; each run executes the same SQL with the placeholders' positions holding
 * the run's values (in the order of `build`'s parameters). Every other parameter the builder bound stays as built.
 */
export function prepared<Row, P extends string[]>(
  db: Pick<Kysely<unknown>, 'executeQuery'>,
  build: (...placeholders: P) => Compilable<Row>,
): (...args: { [K in keyof P]: unknown }) => Promise<Row[]> {
  const placeholders = Array.from({ length: build.length }, (_, i) => placeholder(i));
  const compiled = build(...(placeholders as P)).compile();
  const slots = compiled.parameters.map((p) => placeholders.indexOf(p as string));
  if (placeholders.some((_, i) => !slots.includes(i))) throw new Error(`prepared: a placeholder is not a parameter of: ${compiled.sql}`);
  return async (...args) => {
    const parameters = compiled.parameters.map((p, i) => (slots[i]! >= 0 ? args[slots[i]!] : p));
    const query: CompiledQuery<Row> = { ...compiled, parameters };
    return (await db.executeQuery(query)).rows;
  };
}
