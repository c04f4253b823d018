// The statements that write an account's credit_balances row (reservations, and the AI gateway's usage rows with
// their settlement), run in arrival order per account and grouped: whatever arrives while one transaction is in
// flight goes in the next one, sent as one simple-protocol query (BEGIN; the statements; COMMIT).
//
// Why: every call of an account updates that one row twice (its advance, then its correction). Sent one by one, each
// call's statements queued on that lock inside Postgres, each waiting backend held a connection of the control pool
// (10), and under load the pool's queue, not the work, set the gateway's latency (measured: 50 connections on one
// account, all 10 connections checked out, ~55 checkouts waiting 50-250 ms, 2-3 backends in Lock/transactionid or
// Lock/tuple on the row and ~0.5 in WALSync). Grouped, an account has at most one transaction in flight from this
// process, nothing waits on its row lock here, and N calls share one round trip. Each statement still locks the row
// and computes its amounts on the row's latest version, exactly as alone, in arrival order: other processes (api
// instances, jobs) are serialized with it by that lock as before.
//
// Groups commit without waiting for the WAL flush, so that no group holds the row's lock through a flush: what must
// be durable is made so in the same round trip, after the commit, by a transaction of the set's own (its `durably`
// statement) that touches no row of the account's and is committed durably: its flush takes the WAL up to it, the
// group's commit with it, while nothing waits on the account's row.
//
// Each statement is prepared once per connection (PREPARE, its own round trip the first time) and the group EXECUTEs
// them with their values written as literals: planning the settlement's statement took ~0.45 ms of its ~0.6 ms, on
// the one connection an account's statements go through one after another. Their plans are generic (plan_cache_mode,
// set in the group's transaction only): Postgres would otherwise plan each of the first five executions on every
// connection afresh, and again whenever a custom plan looks cheaper, and the statements look up rows by key (the
// set statements' lookups are written lateral with limit 1 for that), so the generic plan is the one it would choose;
// the group's settings also rule out plans that read a whole table (GROUP_SETTINGS), which a generic plan made while
// a table was small would otherwise keep.
// Measured at one AI call in flight: the gateway's added p50 1.40-1.51 -> 1.12 ms.
import { createHash } from 'node:crypto';
import pg from 'pg';

const PREPARED_STATEMENT_EXISTS = '42P05';
const INVALID_STATEMENT_NAME = '26000';

/** The connection lost its prepared statements (DISCARD ALL by a pooler, say). */
function isMissingStatement(err: unknown): boolean {
  return err instanceof pg.DatabaseError && err.code === INVALID_STATEMENT_NAME;
}

/**
 * A set's `durably` statement that writes nothing but one WAL record: a transactional logical decoding message (no
 * table, no row, any role may send one), which gives its transaction an id and WAL to flush, so that its commit waits
 * for the flush as a commit that wrote a row does. A transaction that only took an id would not wait (Postgres flushes
 * at commit only a transaction that wrote WAL before its commit record).
 */
export const DURABLE_MARK: QueuedStatement = { sql: "select pg_logical_emit_message(true, 'svc.durable', '')", parameters: [] };

/**
 * A group's transaction settings, in one statement: committed without waiting for the flush; generic plans (see the
 * head of this file); and no plan that reads a whole table. The statements look every row up by key, but a generic
 * plan is made once per connection, on the table's size when it is made: made while a table was small (a new
 * platform's first calls), it joined the usage rows it corrects to a scan of the whole table, and kept doing so as the
 * table grew (measured in the AI bench: 4.2 ms a group of corrections, 50 buffers a call, growing with ai_usage).
 */
export const GROUP_SETTINGS = `select ${[
  ['synchronous_commit', 'off'],
  ['plan_cache_mode', 'force_generic_plan'],
  ['enable_seqscan', 'off'],
  ['enable_hashjoin', 'off'],
  ['enable_mergejoin', 'off'],
].map(([name, value]) => `set_config('${name}', '${value}', true)`).join(', ')}`;

/** Most statements in one transaction: bounds how long one transaction holds the row (and its statement's size). */
const MAX_BATCH = 32;

/** A statement for the queue: SQL with $n placeholders (a compiled query), and its values. */
export interface QueuedStatement {
  sql: string;
  parameters: readonly unknown[];
}

/**
 * A statement that runs for many calls at once (BalanceQueue.runInSet): `$1` is their rows, a JSON array in arrival
 * order, each row with its index as `ord`; `parameters` are `$2` on. Each of its result rows carries the `ord` of the
 * call it answers.
 */
export interface SetStatement extends QueuedStatement {
  /**
   * Run after the group's commit, in the same round trip, as a transaction of its own committed durably (with its own
   * `parameters`, not the set's rows): a write whose flush makes the group's commit durable (DURABLE_MARK). Its calls
   * are answered once it is; once per group, however many runs of the set's rows the group holds. It must change
   * nothing of the account's (a group Postgres refused in any part is run again row by row, this with it).
   */
  durably?: QueuedStatement;
}

interface Pending {
  /** The prepared statement's name: one per SQL text. */
  name: string;
  sql: string;
  /** EXECUTE of it with its values written as literals (the simple protocol has no parameters); for a row of a set, written with its group. */
  execute: string;
  /** A call's row of a set statement, and that statement: run with the rows of the calls beside it in the group. */
  row?: object;
  set?: SetStatement;
  resolve(result: pg.QueryResult): void;
  reject(err: unknown): void;
}

/** What one statement of a group's transaction runs: a call's statement, or a set statement for consecutive calls. */
interface Unit {
  name: string;
  sql: string;
  execute: string;
  items: Pending[];
  /** Its set's `durably` statement (prepared as the set is) and its EXECUTE, run after the group's commit. */
  durably?: { name: string; sql: string; execute: string };
}

/**
 * The statements prepared on each connection, by name: kept per connection rather than per queue, as Postgres keeps
 * them, so that queues sharing a pool (tests build several ledgers on one) do not prepare a name twice.
 */
const preparedOn = new WeakMap<pg.ClientBase, Set<string>>();

/** Prepared statements' names by their SQL: the queue's callers have a handful of statements, run again and again. */
const names = new Map<string, string>();
const MAX_NAMES = 256;

function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `balance_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    if (names.size >= MAX_NAMES) names.clear();
    names.set(text, name);
  }
  return name;
}

export class BalanceQueue {
  readonly #pool: pg.Pool;
  /** Queues with a transaction in flight, and the statements waiting for the next one. */
  readonly #waiting = new Map<string, Pending[]>();
  /** Queues waiting for more rows before they send their next group (see #enqueue), and for how long each waits. */
  readonly #lingering = new Map<string, { timer: NodeJS.Timeout; lingerMs: number }>();

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  /**
   * Runs one statement in its queue's next transaction (`queueKey`: an account's, or one lane of it); its result, or its own error (a value that cannot be
   * written as a literal is refused at once, alone). A transaction Postgres refused
   * (one statement failed, so none was applied) is run again statement by statement, so that only the failing one
   * fails; any other failure (no connection, a connection lost mid-transaction, which may have committed) is every
   * statement's error, and none is run again here.
   */
  run(queueKey: string, statement: QueuedStatement): Promise<pg.QueryResult> {
    return new Promise((resolve, reject) => {
      const name = statementName(statement.sql);
      this.#enqueue(queueKey, { name, sql: statement.sql, execute: executeText(name, statement.parameters), resolve, reject });
    });
  }

  /**
   * Runs a call's `row` of a set statement in its queue's next transaction, in one statement with the rows of the
   * calls that arrived just before and after it with the same statement: one statement's planning, locks and index
   * descents for all of them, where each would run its own. The result's rows are this call's (`ord` dropped). Failures
   * as run()'s: a set Postgres refused is run again one row at a time.
   */
  async runInSet<R>(queueKey: string, set: SetStatement, row: object, opts: { lingerMs?: number } = {}): Promise<R[]> {
    // Written as a literal when the group is sent; a value JSON cannot hold is refused now, alone.
    if (Object.values(row).some((v) => typeof v === 'string' && v.includes('\0'))) throw new Error('runInSet: a string holds a NUL character');
    const result = await new Promise<pg.QueryResult>((resolve, reject) => {
      this.#enqueue(queueKey, { name: statementName(set.sql), sql: set.sql, execute: '', row, set, resolve, reject }, opts.lingerMs);
    });
    return result.rows as R[];
  }

  /**
   * `lingerMs`: the queue waits that long for more rows before each group it sends (or until a group is full), for
   * work nobody waits on: fewer, larger transactions, each taking the account's row once and paying a group's fixed
   * cost (its transaction, the statement's start, the flush of its `durably`) once. Measured on the AI gateway's
   * corrections under load: 1,923 / 1,958 -> 2,085 / 2,154 calls/s, Postgres 207-213 -> 181-190 us a call.
   */
  #enqueue(queueKey: string, item: Pending, lingerMs = 0): void {
    const waiting = this.#waiting.get(queueKey);
    if (waiting) {
      waiting.push(item);
      if (waiting.length >= MAX_BATCH && this.#lingering.has(queueKey)) this.#start(queueKey);
      return;
    }
    if (lingerMs > 0) {
      this.#waiting.set(queueKey, [item]);
      this.#linger(queueKey, lingerMs);
      return;
    }
    this.#waiting.set(queueKey, []);
    void this.#drain(queueKey, [item]);
  }

  /** Sends what waits in `lingerMs`, or once a group is full. */
  #linger(queueKey: string, lingerMs: number): void {
    this.#lingering.set(queueKey, { timer: setTimeout(() => this.#start(queueKey), lingerMs), lingerMs });
  }

  /** Ends a queue's lingering: sends what waits. */
  #start(queueKey: string): void {
    const { timer, lingerMs } = this.#lingering.get(queueKey)!;
    clearTimeout(timer);
    this.#lingering.delete(queueKey);
    void this.#drain(queueKey, this.#waiting.get(queueKey)!.splice(0, MAX_BATCH), lingerMs);
  }

  async #drain(queueKey: string, first: Pending[], lingerMs = 0): Promise<void> {
    let batch = first;
    while (batch.length > 0) {
      await this.#send(batch).catch((err: unknown) => batch.forEach((item) => item.reject(err)));
      const waiting = this.#waiting.get(queueKey)!;
      if (lingerMs > 0 && waiting.length > 0 && waiting.length < MAX_BATCH) {
        // Under load a lingering queue lingers between its groups too, so that they stay large (each has a fixed cost).
        this.#linger(queueKey, lingerMs);
        return;
      }
      batch = waiting.splice(0, MAX_BATCH);
    }
    this.#waiting.delete(queueKey);
  }

  async #send(batch: Pending[], again = false): Promise<void> {
    const head = ['begin', GROUP_SETTINGS];
    const units = unitsOf(batch);
    // Once each: a set's rows split by another statement are two units of it, and one flush makes the group durable.
    const durably = [...new Set(units.flatMap((unit) => (unit.durably ? [unit.durably.execute] : [])))];
    const outcome = await this.#transaction(units, [...head, ...units.map((unit) => unit.execute), 'commit', ...durably].join(';\n'));
    if (outcome.ok) {
      units.forEach((unit, i) => answer(unit, outcome.results[head.length + i]!));
    } else if (outcome.refused && isMissingStatement(outcome.err) && !again) {
      // Nothing was applied, and the connection's statements are prepared again on the next try.
      await this.#send(batch, true);
    } else if (outcome.refused && batch.length > 1) {
      for (const item of batch) await this.#send([item]);
    } else {
      for (const item of batch) item.reject(outcome.err);
    }
  }

  /**
   * The transaction as one query, once the connection has the batch's statements prepared. On failure, `refused`:
   * Postgres answered a statement (or its PREPARE) with an error and the connection then rolled back, so nothing was
   * applied and each statement may be tried alone. Not when no connection could be had (each would wait for one
   * again; the error goes to the callers) nor when the connection was lost before the answer (the transaction may have
   * committed).
   */
  async #transaction(batch: Unit[], text: string): Promise<{ ok: true; results: pg.QueryResult[] } | { ok: false; err: unknown; refused: boolean }> {
    let sent: { client: pg.PoolClient; results: Promise<pg.QueryResult[]> };
    try {
      sent = await this.#checkoutAndSend(batch, text);
    } catch (err) {
      return { ok: false, err, refused: false };
    }
    const { client } = sent;
    try {
      const results = await sent.results;
      client.release();
      return { ok: true, results };
    } catch (err) {
      const answered = err instanceof pg.DatabaseError;
      // Prepared again on the next use.
      if (isMissingStatement(err)) preparedOn.delete(client);
      const refused = await client.query('rollback').then(
        () => (client.release(), answered),
        (rollbackErr: Error) => (client.release(rollbackErr), false),
      );
      return { ok: false, err, refused };
    }
  }

  /**
   * Checks a connection out and sends the transaction from the pool's own callback, not from a promise's continuation:
   * those run after Node's nextTick queue, which holds the write of the upstream request an AI call makes beside its
   * advance, so the advance went out second (measured at one call in flight: 0.2-0.3 ms from the checkout to the send).
   */
  #checkoutAndSend(batch: Unit[], text: string): Promise<{ client: pg.PoolClient; results: Promise<pg.QueryResult[]> }> {
    return new Promise((resolve, reject) => {
      this.#pool.connect((err, client) => {
        if (err || !client) reject(err ?? new Error('no connection'));
        else resolve({ client, results: this.#prepareAndSend(client, batch, text) });
      });
    });
  }

  /** Sends the transaction, at once when the connection has the batch's statements prepared, else once it has. */
  #prepareAndSend(client: pg.PoolClient, batch: Unit[], text: string): Promise<pg.QueryResult[]> {
    let prepared = preparedOn.get(client);
    if (!prepared) preparedOn.set(client, (prepared = new Set()));
    const missing = batch.flatMap((unit) => (unit.durably ? [unit, unit.durably] : [unit])).filter((item) => !prepared.has(item.name));
    const send = () => client.query(text) as unknown as Promise<pg.QueryResult[]>;
    return missing.length === 0 ? send() : this.#prepare(client, prepared, missing).then(send);
  }

  /** Prepares statements on this connection: once per connection and statement. */
  async #prepare(client: pg.PoolClient, prepared: Set<string>, missing: { name: string; sql: string }[]): Promise<void> {
    for (const item of missing) {
      if (prepared.has(item.name)) continue;
      // Already there (a name is the hash of its SQL, so it is the same statement): nothing to do.
      await client.query(`prepare ${item.name} as ${item.sql}`).catch((err: unknown) => {
        if (!(err instanceof pg.DatabaseError && err.code === PREPARED_STATEMENT_EXISTS)) throw err;
      });
      prepared.add(item.name);
    }
  }
}

/** The group's statements: each call's alone, and the rows of consecutive calls of one set statement together. */
function unitsOf(batch: Pending[]): Unit[] {
  const units: Unit[] = [];
  for (const item of batch) {
    const last = units.at(-1);
    if (item.row && last?.items[0]!.row && last.name === item.name) last.items.push(item);
    else units.push({ name: item.name, sql: item.sql, execute: item.execute, items: [item] });
  }
  for (const unit of units) {
    const { row, set } = unit.items[0]!;
    if (!row) continue;
    const rows = JSON.stringify(unit.items.map((item, ord) => ({ ...item.row, ord })));
    unit.execute = executeText(unit.name, [rows, ...set!.parameters]);
    const durably = set!.durably;
    if (!durably) continue;
    const name = statementName(durably.sql);
    unit.durably = { name, sql: durably.sql, execute: executeText(name, durably.parameters) };
  }
  return units;
}

/** Gives each call of a unit its answer: a set's rows go to the call of their `ord`. */
function answer(unit: Unit, result: pg.QueryResult): void {
  if (!unit.items[0]!.row) return unit.items[0]!.resolve(result);
  const rows: Record<string, unknown>[][] = unit.items.map(() => []);
  for (const { ord, ...rest } of result.rows as { ord: number }[]) rows[ord]?.push(rest);
  unit.items.forEach((item, i) => item.resolve({ ...result, rows: rows[i]! }));
}

/**
 * EXECUTE of a prepared statement with its values as SQL literals, for the simple protocol. Only the value kinds the
 * ledger's and the gateway's statements bind are accepted; strings go through pg's escapeLiteral. Postgres reads
 * each literal as the parameter's type, as it would a bound value.
 */
export function executeText(name: string, parameters: readonly unknown[]): string {
  return parameters.length === 0 ? `execute ${name}` : `execute ${name}(${parameters.map(literal).join(', ')})`;
}

function literal(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  // Parenthesized: a negative number after a minus sign must not become a comment (--).
  if (typeof value === 'number' && Number.isFinite(value)) return `(${value})`;
  if (typeof value === 'bigint') return `(${value})`;
  if (typeof value === 'string') {
    // The simple protocol ends the statement at a NUL (Postgres text cannot hold one anyway): refused here, alone.
    if (value.includes('\0')) throw new Error('executeText: a string holds a NUL character');
    return quoted(value);
  }
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) {
    // Postgres's array text, as pg would send the array as a parameter: every element quoted.
    if (value.some((v: string) => v.includes('\0'))) throw new Error('executeText: a string holds a NUL character');
    return quoted(`{${value.map((v: string) => `"${v.replace(/[\\"]/g, (c) => `\\${c}`)}"`).join(',')}}`);
  }
  throw new Error(`executeText: cannot write ${typeof value} as a literal`);
}

/**
 * A string as an SQL literal, as pg's escapeLiteral writes it (quotes doubled; with a backslash, an E'' literal with
 * backslashes doubled), by two linear replaces instead of its loop of one concatenation per character: a set's rows
 * are one literal of some kilobytes (measured: escapeLiteral was 0.8 % of the AI gateway's CPU under load).
 */
function quoted(value: string): string {
  const body = value.replaceAll("'", "''");
  return value.includes('\\') ? ` E'${body.replaceAll('\\', '\\\\')}'` : `'${body}'`;
}
