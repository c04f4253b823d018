// The response check of the load generator (bench/load.ts): every body must contain each of `expect`, at least one
// of `expectOneOf` (when given) and none of `forbid`; otherwise autocannon counts it as a mismatch.
//
// A module of its own because autocannon's worker threads cannot be handed a function: in workers mode they
// require() this file (its 'module.exports' is the check), reading the spec from BENCH_LOAD_VERIFY, which load.ts
// sets before it starts them (a worker's process.env is a copy of its parent's).

export interface VerifySpec {
  expect: string[];
  expectOneOf?: string[] | undefined;
  forbid: string[];
}

export function verifier(spec: VerifySpec): (body: string) => boolean {
  const { expect, forbid } = spec;
  const oneOf = spec.expectOneOf?.length ? spec.expectOneOf : undefined;
  return (body) => expect.every((s) => body.includes(s)) && !forbid.some((s) => body.includes(s)) && (!oneOf || oneOf.some((s) => body.includes(s)));
}

export const VERIFY_ENV = 'BENCH_LOAD_VERIFY';

let check: ((body: string) => boolean) | undefined;
/** What a worker thread's require() of this file returns. */
const verifyFromEnv = (body: string): boolean => {
  check ??= verifier(JSON.parse(process.env[VERIFY_ENV] ?? '{"expect":[],"forbid":[]}') as VerifySpec);
  return check(body);
};

export { verifyFromEnv as 'module.exports' };
