import pino from 'pino';
import type { TestProject } from 'vitest/node';
import { migrateControl, openControlDb } from '../../src/db/control.ts';
import { adminQuery, databaseUrl, uniqueSuffix } from './db.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDb: string;
  }
}

/**
 * Migrates one template control database per run (named per run, so concurrent runs do not collide);
 * every test file clones it with CREATE DATABASE ... TEMPLATE.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const name = `svc_test_template_${uniqueSuffix()}`;
  await adminQuery(`create database ${name}`);
  const control = openControlDb(databaseUrl(name), 2);
  try {
    await migrateControl(control, pino({ level: 'silent' }), async () => {});
  } finally {
    await control.close();
  }
  project.provide('templateDb', name);
  return async () => {
    await adminQuery(`drop database if exists ${name} with (force)`);
  };
}
