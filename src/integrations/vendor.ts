// How the vendor's failures reach callers. Two families: tool executions, whose every failure is the spec's
// INTEGRATIONS_EXECUTION_FAILED (422 the tool's or its arguments' fault, 502 the vendor unreachable), and the other
// calls (catalog, auth configs, connect links), whose outages are 502 UPSTREAM_ERROR and refusals 400 UPSTREAM_REJECTED.
import type { AppError } from '../core/errors.ts';
import { integrationErrors } from './types.ts';
import { VendorError, type VendorFailure } from './vendor-port.ts';

/** Runs a catalog, configuration or connection call, mapping the vendor's failures. */
export async function askVendor<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (!(err instanceof VendorError)) throw err;
    const f = err.failure;
    throw f.kind === 'status' && callersFault(f.status) ? integrationErrors.vendorRejected(f.message) : integrationErrors.vendorUnavailable(describe(f));
  }
}

/** An execution's vendor failure as INTEGRATIONS_EXECUTION_FAILED; anything else as it is. */
export function executionFault(err: unknown): unknown {
  if (!(err instanceof VendorError)) return err;
  const f = err.failure;
  const mapped: AppError = f.kind === 'status' && callersFault(f.status) ? integrationErrors.toolFailed(f.message) : integrationErrors.executionUnavailable(describe(f));
  return mapped;
}

/** A 4xx is the caller's to fix, except the vendor refusing the platform itself (its key, its quota): the operator's. */
function callersFault(status: number): boolean {
  return status >= 400 && status < 500 && status !== 401 && status !== 403 && status !== 429;
}

function describe(f: VendorFailure): string {
  switch (f.kind) {
    case 'status':
      return `answered ${f.status}: ${f.message.slice(0, 300)}`;
    case 'timeout':
      return 'did not answer in time';
    case 'aborted':
      return 'call was cancelled';
    case 'network':
      return 'could not be reached';
    case 'malformed':
      return `sent a malformed answer (${f.message})`;
  }
}
