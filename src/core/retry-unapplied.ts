// Retrying a write that certainly did not happen. A statement Postgres answered with an error (a SQLSTATE) was rolled
// back, and a connection that could not be had ran nothing; a connection lost mid-statement may have committed, so
// that one is never retried (it could charge twice).

/** Statement errors that pass: serialization, deadlock, no free connection, shutdown, cancellation by an operator. */
const PASSING_SQLSTATE = /^(40001|40P01|53300|57P01|57P02|57P03|57014|55P03)$/;
const NOT_CONNECTED = ['timeout exceeded when trying to connect', 'Connection terminated due to connection timeout'];

export function certainlyUnapplied(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && PASSING_SQLSTATE.test(code)) return true;
  if (code === 'ECONNREFUSED') return true;
  return typeof message === 'string' && NOT_CONNECTED.some((m) => message.startsWith(m));
}

/**
 * Runs `write`, again after `delaysMs[i]` while it fails in a way that leaves nothing written (`retryable`: any
 * failure, for a write whose second run changes nothing); any other failure, or the last one, is thrown.
 */
export async function retryUnapplied<T>(write: () => Promise<T>, delaysMs: readonly number[], retryable: (err: unknown) => boolean = certainlyUnapplied): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      if (attempt >= delaysMs.length || !retryable(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, delaysMs[attempt]));
    }
  }
}
