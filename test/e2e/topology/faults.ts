// The faults of the topology test, each with what it did, and the timeline they run on.
import pg from 'pg';
import type { Topology } from '../../helpers/topology.ts';
import { sleep } from './client.ts';

export interface FaultRecord {
  at: number;
  what: string;
}

/** Ends every connection the platform holds on the second cluster's app databases; the count of them. */
export async function terminateAppConnections(t: Topology): Promise<number> {
  const admin = new pg.Client({ connectionString: `${t.cluster2.url}/postgres` });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ ended: boolean }>(
      `select pg_terminate_backend(pid) as ended from pg_stat_activity where starts_with(datname, $1) and pid <> pg_backend_pid()`,
      [t.appDbPrefix],
    );
    return rows.filter((r) => r.ended).length;
  } finally {
    await admin.end();
  }
}

/**
 * The faults, in order, a few seconds apart while the workload runs: an api process killed and restarted, the worker
 * killed mid-job and restarted, the second cluster's connections ended, the S3 server down for a few seconds.
 */
export interface FaultHooks {
  /** Before the worker's death: sees to it that it holds jobs mid-run; says what it holds. */
  beforeWorkerKill(): Promise<string>;
  whileWorkerDown(): Promise<void>;
}

export async function runFaults(t: Topology, started: number, gapMs: number, hooks: FaultHooks): Promise<FaultRecord[]> {
  const done: FaultRecord[] = [];
  const note = (what: string) => {
    done.push({ at: Math.round((Date.now() - started) / 100) / 10, what });
    process.stderr.write(`[topology fault] ${what}\n`);
  };
  await sleep(gapMs);
  await t.apis[0].kill9();
  note('kill -9 api-1');
  await sleep(gapMs / 2);
  await t.apis[0].restart();
  note('api-1 restarted');
  await sleep(gapMs);
  const held = await hooks.beforeWorkerKill();
  await t.worker.kill9();
  note(`kill -9 worker holding ${held}`);
  await hooks.whileWorkerDown();
  await sleep(gapMs / 2);
  await t.worker.restart();
  note('worker restarted');
  await sleep(gapMs);
  note(`pg_terminate_backend: ${await terminateAppConnections(t)} connections on the eu cluster`);
  await sleep(gapMs);
  await t.s3.stop();
  note('S3 stopped');
  await sleep(gapMs / 2);
  await t.s3.start();
  note('S3 started');
  await sleep(gapMs);
  return done;
}
