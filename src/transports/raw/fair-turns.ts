// Per-app turns on the event loop for the functions hot path. Requests that arrive together (an app's clients
// resending after a Retry-After, or a wave of its functions ending at once) are handled in one go by Node: hundreds
// of them, each 100-150 us of routing, pool and runner work, delay every other app's request behind them by tens of
// milliseconds. Once the event loop has spent its budget on requests in one iteration, the next ones wait for a turn:
// turns take one request per app in rotation, and yield to the event loop (setImmediate) when the budget is spent
// again, so other apps' requests that arrive meanwhile are read and served in the next rotation, not after the flood.

/** Event-loop time (ms) spent on requests in one iteration before the rest wait for turns. */
export const TURN_BUDGET_MS = 1;

export interface FairTurnsOptions {
  budgetMs?: number;
  /** The clock (ms): performance.now in production, a fake in tests. */
  now?: () => number;
  /** Runs a callback after the event loop has polled for I/O again: setImmediate in production. */
  defer?: (callback: () => void) => void;
}

export class FairTurns {
  readonly #budgetMs: number;
  readonly #now: () => number;
  readonly #defer: (callback: () => void) => void;
  /** Waiting starts per app, in arrival order; an app is in the map only while it has some (insertion = rotation). */
  readonly #waiting = new Map<string, Array<() => void>>();
  /** When this iteration's first request started, or undefined when none has since the last turn. */
  #iterationStart: number | undefined;
  #turnScheduled = false;

  constructor(options: FairTurnsOptions = {}) {
    this.#budgetMs = options.budgetMs ?? TURN_BUDGET_MS;
    this.#now = options.now ?? (() => performance.now());
    this.#defer = options.defer ?? ((callback) => void setImmediate(callback));
  }

  /**
   * Starts `start` now while the iteration's budget lasts and nothing waits; otherwise in `key`'s next turn. `start`
   * must not throw (an async function's start: its failures are its promise's).
   */
  run(key: string, start: () => void): void {
    const now = this.#now();
    this.#iterationStart ??= now;
    if (this.#waiting.size === 0 && now - this.#iterationStart < this.#budgetMs) {
      this.#scheduleTurn(); // the next iteration starts with a fresh budget
      start();
      return;
    }
    const queue = this.#waiting.get(key);
    if (queue) queue.push(start);
    else this.#waiting.set(key, [start]);
    this.#scheduleTurn();
  }

  #scheduleTurn(): void {
    if (this.#turnScheduled) return;
    this.#turnScheduled = true;
    this.#defer(() => this.#turn());
  }

  /** One app's request after another's, in rotation, until the budget is spent or nothing waits. */
  #turn(): void {
    this.#turnScheduled = false;
    const started = this.#now();
    this.#iterationStart = undefined;
    while (this.#waiting.size > 0 && this.#now() - started < this.#budgetMs) {
      const [key, queue] = this.#waiting.entries().next().value!;
      this.#waiting.delete(key);
      if (queue.length > 1) this.#waiting.set(key, queue); // to the back of the rotation
      queue.shift()!();
    }
    if (this.#waiting.size > 0) this.#scheduleTurn();
  }
}
