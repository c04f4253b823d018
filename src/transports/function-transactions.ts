// The transactions of one function invocation (ctx.data.transaction): the runner names them by a number this
// invocation gave out, so no other invocation's transaction can be reached, and whatever the invocation leaves open
// when it ends (returned, threw, timed out, its process died) is rolled back here, in the process that holds the
// connection.
import { errors } from '../core/errors.ts';
import type { Caller } from '../core/caller.ts';
import type { DataService } from '../data/service.ts';
import { transactionErrors, type DataTransaction } from '../data/transaction.ts';

/** Transactions one invocation may have open at once: they do not nest. */
export const TRANSACTIONS_PER_INVOCATION = 1;

/** A transaction of the invocation: the data service bound to it and the caller it was begun as (its calls run as that caller). */
export interface InvocationTransaction {
  tx: DataTransaction;
  data: DataService;
  caller: Caller;
  /** Its callback ended (commit or rollback asked): it no longer counts as open; its calls are answered with how it ended. */
  settled: boolean;
  /** The end of its latest call. */
  last: Promise<unknown>;
}

export class InvocationTransactions {
  readonly #data: DataService;
  readonly #all = new Map<number, InvocationTransaction>();
  #next = 1;
  #beginning = 0;
  #ended = false;

  constructor(data: DataService) {
    this.#data = data;
  }

  /** BEGIN as `caller`; answers the number its calls name. */
  async begin(appId: string, caller: Caller): Promise<number> {
    if (this.#ended) throw transactionErrors.ended('rolled back');
    // Begins under way count: two racing cannot both pass.
    const open = [...this.#all.values()].filter((t) => !t.settled).length;
    if (open + this.#beginning >= TRANSACTIONS_PER_INVOCATION) throw transactionErrors.tooManyForInvocation(TRANSACTIONS_PER_INVOCATION);
    this.#beginning++;
    let tx: DataTransaction;
    try {
      tx = await this.#data.begin(appId, caller);
    } finally {
      this.#beginning--;
    }
    // The invocation ended while BEGIN was under way: nothing else would end this one.
    if (this.#ended) {
      await tx.rollback();
      throw transactionErrors.ended('rolled back');
    }
    const id = this.#next++;
    this.#all.set(id, { tx, data: this.#data.in(tx), caller, settled: false, last: Promise.resolve() });
    return id;
  }

  /**
   * Runs `fn` on transaction `id` once its earlier calls have ended, their failures' rollback included: its connection
   * runs one statement at a time anyway, and so no call meets the aborted state an earlier failure left unannounced.
   */
  inTurn<T>(id: number, fn: (open: InvocationTransaction) => Promise<T>): Promise<T> {
    const open = this.#all.get(id);
    if (!open) {
      throw errors.notFound(`Transaction ${id}`, 'Make calls with the tx that ctx.data.transaction passes to its callback, inside that callback.');
    }
    const turn = open.last.then(() => fn(open));
    open.last = turn.catch(() => {});
    return turn;
  }

  /** The callback resolved: COMMIT after its calls in flight, or the reason it was already rolled back. */
  commit(id: number): Promise<void> {
    return this.inTurn(id, (open) => {
      open.settled = true;
      return open.tx.commit();
    });
  }

  /** The callback threw: ROLLBACK at once (a call in flight ends with the transaction). */
  async rollback(id: number): Promise<void> {
    const open = this.#all.get(id);
    if (!open) return;
    open.settled = true;
    await open.tx.rollback();
  }

  /** The invocation ended: every transaction it left open is rolled back and its connection released. */
  async end(): Promise<void> {
    this.#ended = true;
    await Promise.all([...this.#all.values()].map((open) => open.tx.rollback()));
  }
}
