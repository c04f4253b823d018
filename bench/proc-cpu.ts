// CPU time of processes, read from /proc: the server under test and the machine's PostgreSQL over a round, so a
// round's figures say where the machine's CPU went (the 2 cores are shared by the server, Postgres, the upstreams and
// the load generator, and Postgres's share is the platform's cost as much as its own process's).
import { readdirSync, readFileSync } from 'node:fs';

/** Linux's clock ticks per second in /proc/<pid>/stat (USER_HZ). */
const TICKS = 100;

/** The fields of /proc/<pid>/stat after the command's name (field 3, the state, first), or undefined once it exited. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** CPU seconds (user + system) of each process, from /proc; a process gone meanwhile is skipped. */
export function cpuSeconds(pids: number[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of pids) {
    const fields = statFields(pid);
    if (fields) out.set(pid, (Number(fields[11]) + Number(fields[12])) / TICKS);
  }
  return out;
}

/**
 * CPU seconds of the processes below `pids` (the platform's function runners, the relay's): those alive, by pid, and
 * under the key 0 those that ended and were waited for (their parents' cutime + cstime; one that ends within a round
 * counts its whole life there, which a round's runners, started before it, do not do).
 */
function childSeconds(pids: number[]): Map<number, number> {
  const parents = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const fields = statFields(Number(name));
    if (fields) parents.set(Number(name), Number(fields[1]));
  }
  const below = new Set<number>();
  const ancestors = new Set(pids);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, parent] of parents) {
      if (!below.has(pid) && (ancestors.has(parent) || below.has(parent))) {
        below.add(pid);
        grew = true;
      }
    }
  }
  const out = cpuSeconds([...below]);
  let reaped = 0;
  for (const pid of [...pids, ...below]) {
    const fields = statFields(pid);
    if (fields) reaped += (Number(fields[13]) + Number(fields[14])) / TICKS;
  }
  out.set(0, reaped);
  return out;
}

/** Every PostgreSQL process of the machine (the postmaster, its backends and workers). */
export function postgresPids(): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/comm`, 'utf8').trim() === 'postgres') pids.push(Number(name));
    } catch {
      // exited
    }
  }
  return pids;
}

/** CPU seconds of processes between two samples (a process that started meanwhile counts from zero). */
function secondsBetween(before: Map<number, number>, after: Map<number, number>): number {
  let seconds = 0;
  for (const [pid, s] of after) seconds += s - (before.get(pid) ?? 0);
  return seconds;
}

/** CPU of processes between two samples, % of one core over `ms`. */
export function cpuPercent(before: Map<number, number>, after: Map<number, number>, ms: number): number {
  return (secondsBetween(before, after) * 1000 * 100) / ms;
}

/**
 * Starts counting the CPU of `pids`, of the processes they started (function runners) and of every PostgreSQL process
 * (those that start meanwhile included); the function returned gives the seconds each used since.
 */
export function cpuSince(pids: number[]): () => { servers: number; children: number; postgres: number } {
  const pg = postgresPids();
  const before = { servers: cpuSeconds(pids), children: childSeconds(pids), postgres: cpuSeconds(pg) };
  return () => ({
    servers: secondsBetween(before.servers, cpuSeconds(pids)),
    children: secondsBetween(before.children, childSeconds(pids)),
    postgres: secondsBetween(before.postgres, cpuSeconds([...new Set([...pg, ...postgresPids()])])),
  });
}
