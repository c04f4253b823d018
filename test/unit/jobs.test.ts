// Jobs are defined once (defineJob in their area) and enqueued only through src/core/jobs.ts, so a task name, its
// payload and its handler cannot drift apart.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { enqueue, enqueueSql } from '../../src/core/jobs.ts';
import { peopleEmailExpire } from '../../src/people/jobs.ts';
import { ragIngest } from '../../src/rag/jobs.ts';
import { crontab, jobs } from '../../workers/index.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

function filesUnder(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)));
}

/** Compiles statements without a database, to see what enqueue would send. */
const offline = new Kysely<any>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

describe('jobs', () => {
  it('only src/core/jobs.ts spells graphile_worker.add_job', () => {
    // db/migrations are history: 0021's trigger enqueues meetings_leave_orphan in SQL and stays as it was applied.
    const files = ['src', 'tools', 'workers', 'db'].flatMap(filesUnder).filter((f) => !f.startsWith('db/migrations/'));
    const spelling = files.filter((f) => readFileSync(path.join(ROOT, f), 'utf8').includes('add_job'));
    expect(spelling).toEqual(['src/core/jobs.ts']);
  });

  it('every job name is unique and snake_case', () => {
    const names = jobs.map((j) => j.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)+$/);
  });

  it('builds the crontab the worker always had', () => {
    const expected = [
      '*/10 * * * * apps_reap ?max=1',
      '*/5 * * * * rate_limits_purge ?max=1',
      '* * * * * credits_release_expired ?max=1',
      '* * * * * ai_usage_meter ?max=1',
      '*/5 * * * * storage_settle_pending ?max=1',
      '* * * * * functions_cron_tick ?max=1',
      '*/5 * * * * functions_logs_trim ?max=1',
      '5 0 * * * substrate_snapshots ?fill=1d&max=1',
      '* * * * * substrate_rules_tick ?max=1',
      '* * * * * billing_enforce ?max=1',
      '17 * * * * billing_pause_idle ?max=1',
      '*/15 * * * * billing_measure_databases ?max=1',
      '23 * * * * billing_invoice_overage ?max=1',
      '29 4 * * * audit_purge ?max=1',
      '47 * * * * oauth_prune ?max=1',
      '51 * * * * signup_requests_prune ?max=1',
      '41 3 * * * integrations_prune ?max=1',
      '53 3 * * * substrate_prune ?max=1',
      '17 * * * * branches_expire ?max=1',
    ].join('\n');
    expect(crontab).toBe(expected);
  });

  it('refuses a bad payload before the database is touched', async () => {
    let touched = false;
    const db = new Proxy({} as Kysely<any>, {
      get() {
        touched = true;
        throw new Error('the database was touched');
      },
    });
    await expect(enqueue(db, ragIngest, { app_id: 'a', document_id: 'not-a-uuid' })).rejects.toThrow(/document_id|uuid/i);
    expect(touched).toBe(false);
  });

  it('passes the given options and the job default attempts to add_job', () => {
    const { sql: text, parameters } = enqueueSql(peopleEmailExpire, sql`json_build_object('lookup_id', id::text)`, { jobKey: 'k', runAt: new Date(0) }).compile(offline);
    expect(text).toBe(
      "select graphile_worker.add_job($1::text, json_build_object('lookup_id', id::text), job_key => $2::text, run_at => $3::timestamptz, max_attempts => $4::int)",
    );
    expect(parameters).toEqual(['people_email_expire', 'k', new Date(0), 10]);
  });
});
