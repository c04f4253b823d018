// The tutoring marketplace of docs/design/schema-functions.md §3.1 as the SQL checks see it: each table's columns and
// the columns that lead an index (its primary key, unique constraints and indexes).
import { expect } from 'vitest';
import { AppError } from '../../src/core/errors.ts';
import type { TableMap } from '../../src/schema/sql/walker.ts';

const table = (columns: string, indexed: string) => ({ columns: new Set(columns.split(' ')), indexedLeading: new Set(indexed.split(' ')) });

export const TUTORING: TableMap = new Map([
  ['tutor_profiles', table('id user_id bio hourly_rate created_at', 'id user_id')],
  ['slots', table('id tutor_id starts_at ends_at created_at', 'id tutor_id')],
  ['bookings', table('id slot_id student_id tutor_id status note created_at', 'id slot_id tutor_id')],
  ['booking_events', table('id booking_id kind created_at', 'id booking_id')],
  ['reviews', table('id booking_id user_id rating body created_at', 'id booking_id user_id')],
]);

/** The AppError fn throws (the test fails when it throws nothing or something else). */
export function refusal(fn: () => unknown): AppError {
  let thrown: unknown = new Error('expected a refusal, got none');
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  expect(thrown).toBeInstanceOf(AppError);
  return thrown as AppError;
}

/** The exact 400 message fn is refused with. */
export function refusedWith(fn: () => unknown): string {
  const err = refusal(fn);
  expect([err.status, err.code]).toEqual([400, 'VALIDATION_FAILED']);
  return err.message;
}
