// The topology test's HTTP client and its bookkeeping: every request goes through the load balancer; an answer is
// acknowledged (a 2xx), refused (another status: nothing happened, by the platform's contract, except that a 503 for
// a lost database connection may have committed) or unknown (the connection failed or the proxy answered 502: the
// request may or may not have taken effect).
import { request, type RawRequestOptions, type RawResponse } from '../e2e-helpers.ts';

export type CallOptions = Omit<RawRequestOptions, 'method'>;

/** A request that got no answer from the platform (the connection broke, or the proxy's backend did). */
export class NoAnswer extends Error {}

/** One request to `base` on a fresh connection; throws NoAnswer when the platform's answer did not arrive. */
export async function call(base: string, method: string, path: string, opts: CallOptions = {}): Promise<RawResponse> {
  let res: RawResponse;
  try {
    res = await request(base, path, { ...opts, method });
  } catch (err) {
    throw new NoAnswer(String(err));
  }
  if (res.status === 502 && res.text === 'bad gateway') throw new NoAnswer('502 from the proxy');
  return res;
}

/** Counts of one kind of operation by outcome, and the statuses of refusals. */
export class Tally {
  acknowledged = 0;
  unknown = 0;
  readonly refused = new Map<string, number>();

  /** Runs one operation: its 2xx answer, else undefined (a refusal or no answer is counted). */
  async run(op: () => Promise<RawResponse>): Promise<RawResponse | undefined> {
    return (await this.attempt(op)).answer;
  }

  /**
   * Runs one operation: its 2xx answer if any, and whether it may have taken effect without one: no answer at all, or
   * a 503 (the platform's answer when a database connection was lost, possibly mid-commit).
   */
  async attempt(op: () => Promise<RawResponse>): Promise<{ answer?: RawResponse; unknown: boolean }> {
    try {
      const res = await op();
      if (res.status >= 200 && res.status < 300) {
        this.acknowledged++;
        return { answer: res, unknown: false };
      }
      const key = `${res.status} ${(res.json as { error?: { code?: string } } | undefined)?.error?.code ?? res.text.slice(0, 60)}`;
      this.refused.set(key, (this.refused.get(key) ?? 0) + 1);
      return { unknown: res.status === 503 };
    } catch (err) {
      if (!(err instanceof NoAnswer)) throw err;
      this.unknown++;
      return { unknown: true };
    }
  }

  /** Operations that may have taken effect without an acknowledgement: no answer, or a 503. */
  get uncertain(): number {
    return this.unknown + [...this.refused].filter(([k]) => k.startsWith('503 ')).reduce((n, [, c]) => n + c, 0);
  }

  toString(): string {
    const refused = [...this.refused].map(([k, n]) => `${n}× ${k}`).join(', ');
    return `${this.acknowledged} acknowledged, ${this.unknown} unanswered${refused ? `, refused: ${refused}` : ''}`;
  }
}

/** Runs `op` again and again until `running()` is false, `concurrency` at a time. */
export async function loop(running: () => boolean, concurrency: number, op: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (running()) await op(next++);
    }),
  );
}

/** Jobs one worker process runs at once (SVC_WORKER_CONCURRENCY's default): what its death can cut mid-job. */
export const WORKER_CONCURRENCY = 4;

/** How long the checks wait for work the faults delayed to settle. */
export const SETTLE_MS = 60_000;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
