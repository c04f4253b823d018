// A second PostgreSQL cluster for region tests: the machine's PostgreSQL binaries (with the same pgvector), a fresh data
// directory initialized by initdb and a server on a free loopback port, trust auth, stopped and removed by stop().
// PostgreSQL refuses to run as root, so as root the commands run as the `postgres` user.
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './server.ts';

const run = promisify(execFile);

export interface SecondCluster {
  /** postgres://postgres@127.0.0.1:<port> */
  url: string;
  stop(): Promise<void>;
}

/** The server binaries of the machine's PostgreSQL (pg_config's, else Debian's place for version 15). */
function binDir(): string {
  try {
    return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
  } catch {
    return '/usr/lib/postgresql/15/bin';
  }
}

/** The uid and gid to run PostgreSQL as: `postgres` when we are root, else ourselves. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

export async function startSecondCluster(): Promise<SecondCluster> {
  const bin = binDir();
  const root = mkdtempSync(path.join(tmpdir(), 'svc-pg2-'));
  const data = path.join(root, 'data');
  const user = runAs();
  if (user) chownSync(root, user.uid, user.gid);
  const opts = user ? { uid: user.uid, gid: user.gid, cwd: root } : { cwd: root };
  const port = await freePort();
  const serverOpts = `-p ${port} -c listen_addresses=127.0.0.1 -k ${root} -c fsync=off -c max_connections=60`;
  try {
    await run(path.join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C'], opts);
    await run(path.join(bin, 'pg_ctl'), ['-D', data, '-o', serverOpts, '-l', path.join(root, 'log'), '-w', '-t', '60', 'start'], opts);
  } catch (err) {
    await run(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop'], opts).catch(() => {});
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}`,
    stop: async () => {
      await run(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop'], opts).catch(() => {});
      rmSync(root, { recursive: true, force: true });
    },
  };
}
