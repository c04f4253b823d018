// The request rotation of the load generator (bench/load.ts): request i, counted across all connections of a thread,
// goes to paths[i % paths.length] with headerSets[i % headerSets.length] merged over the spec's headers (and over the
// headers of the origin its connection goes to, originHeaders).
//
// A module of its own because autocannon's worker threads cannot be handed a function: in workers mode they
// require() this file (its 'module.exports' is the setupRequest), reading the rotation from BENCH_LOAD_ROTATION, which
// load.ts sets before it starts them (a worker's process.env is a copy of its parent's).
import type { RequestParams } from 'autocannon';

export interface Rotation {
  paths?: string[] | undefined;
  headerSets?: Array<Record<string, string>> | undefined;
  /** Per origin (`http://host:port`), merged under headerSets. */
  originHeaders?: Record<string, Record<string, string>> | undefined;
}

export function rotator(rotation: Rotation): (req: RequestParams) => RequestParams {
  const paths = rotation.paths?.length ? rotation.paths : undefined;
  const sets = rotation.headerSets?.length ? rotation.headerSets : undefined;
  const origins = rotation.originHeaders;
  let next = 0;
  return (req) => {
    const i = next++;
    // autocannon hands each request its connection's target, `host` being host:port.
    const own = origins?.[`http://${req.host}`];
    return {
      ...req,
      ...(paths ? { path: paths[i % paths.length]! } : {}),
      ...(sets || own ? { headers: { ...req.headers, ...own, ...(sets ? sets[i % sets.length]! : {}) } } : {}),
    };
  };
}

export const ROTATION_ENV = 'BENCH_LOAD_ROTATION';

let rotate: ((req: RequestParams) => RequestParams) | undefined;
/** What a worker thread's require() of this file returns. */
const rotateFromEnv = (req: RequestParams): RequestParams => {
  rotate ??= rotator(JSON.parse(process.env[ROTATION_ENV] ?? '{}') as Rotation);
  return rotate(req);
};

export { rotateFromEnv as 'module.exports' };
