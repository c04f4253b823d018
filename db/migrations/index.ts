import type { Migration } from 'kysely/migration';
import * as core from './0001_core.ts';

/** Control-plane migrations in order; kysely applies the ones not yet recorded. */
export const migrations: Record<string, Migration> = {
  '0001_core': core,
};
