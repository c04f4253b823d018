// Pages of a list bounded by bytes as well as rows, so that no answer grows with what a tenant stored: the page's query
// selects budgetColumns (in the order it pages in) under its row limit; the caller selects from it as a subquery
// where withinBudget holds. Window functions run before the limit, so `has_more` sees past it; Postgres computes the
// three over one window. The first row is always kept (it is bounded by what a row may hold), so a cursor moves on.
import { sql, type RawBuilder } from 'kysely';

/** A page's row number, running total of `size` bytes and whether a row follows it, in `order` (the page's own). */
export function budgetColumns(size: RawBuilder<number>, order: RawBuilder<unknown>) {
  return [
    sql<number>`row_number() over (order by ${order})`.as('rn'),
    sql<string>`sum(${size}) over (order by ${order})`.as('running'),
    sql<boolean>`lead(1) over (order by ${order}) is not null`.as('has_more'),
  ] as const;
}

/** The rows of the page (selected from as a subquery) within `budget` bytes, and always its first. */
export function withinBudget(budget: number): RawBuilder<boolean> {
  return sql<boolean>`(rn = 1 or running <= ${budget})`;
}

/** The next page's cursor, `cursor` of the page's last row, while a row follows it; else null. */
export function nextCursor<R extends { has_more: boolean }>(rows: readonly R[], cursor: (row: R) => string): string | null {
  const last = rows.at(-1);
  return last?.has_more ? cursor(last) : null;
}
