// Functions in the topology: an HTTP function that writes a note as its calling end user (ctx.data, row-level
// security), served by whichever api process the balancer picks; and a cron function the worker runs, whose slots are
// dispatched by the real tick job (functions_cron_tick, given a `now` ahead of the clock so that a short test sees
// several minutes of slots) before, during and after the worker's death.
import { expect } from 'vitest';
import type { Topology } from '../../helpers/topology.ts';
import { waitFor } from '../../integration/frontend-helpers.ts';
import { call, SETTLE_MS } from './client.ts';
import type { TopologyApp } from './data.ts';

/** Inserts the note named in the body as the calling end user; answers with the data API's status. */
const NOTE_FUNCTION = `export default async (req: Request, ctx) => {
  const { title } = await req.json();
  const res = await ctx.data.from("notes").insert({ title });
  return Response.json({ error: res.error }, { status: res.status });
};`;

/**
 * Records its slot once in cron_runs: a second run of a slot (after a crash) finds it there and changes nothing. It
 * takes a while first, so that the worker's death lands in the middle of a run. The topology terminates the app
 * cluster's connections meanwhile, and the platform does not retry a function's own failed write (the function
 * decides): like a real cron function, this one tries a write that failed with 5xx again, a few times.
 */
const CRON_FUNCTION = `export default async (req: Request, ctx) => {
  const { scheduled_at } = await req.json();
  await new Promise((r) => setTimeout(r, 4000));
  let res = await ctx.asApp.data.from("cron_runs").insert({ slot: scheduled_at });
  for (let tries = 1; res.status >= 500 && tries < 10; tries++) {
    await new Promise((r) => setTimeout(r, 1000));
    res = await ctx.asApp.data.from("cron_runs").insert({ slot: scheduled_at });
  }
  console.log(res.status === 409 ? "again" : "first", scheduled_at, res.status);
  return new Response(null, { status: res.status === 409 ? 200 : res.status });
};`;

const CRON_RUNS = {
  tables: {
    cron_runs: {
      columns: { slot: { type: 'text', primary: true }, ran_at: { type: 'timestamptz', default: 'now()' } },
      access: 'service',
    },
  },
};

export async function deployNoteFunction(t: Topology, app: TopologyApp): Promise<void> {
  const res = await call(t.url, 'POST', `/v1/${app.appId}/functions`, { key: app.serviceKey, body: { name: 'note', code: NOTE_FUNCTION } });
  expect(res.status).toBe(201);
}

/** The cron side: a function every minute, its slots dispatched by ticks at `minutesAhead` of the clock. */
export class CronSlots {
  readonly #app: TopologyApp;
  #functionId = '';
  #createdAt = 0;
  readonly #ticks: number[] = [];

  constructor(app: TopologyApp) {
    this.#app = app;
  }

  async deploy(t: Topology): Promise<void> {
    const schema = await call(t.url, 'POST', `/v1/${this.#app.appId}/schema/apply`, { key: this.#app.serviceKey, body: { schema: CRON_RUNS, name: 'cron runs' } });
    expect(schema.status).toBe(200);
    const fn = await call(t.url, 'POST', `/v1/${this.#app.appId}/functions`, {
      key: this.#app.serviceKey,
      body: { name: 'every-minute', code: CRON_FUNCTION, trigger: { type: 'cron', config: { schedule: '* * * * *' } } },
    });
    expect(fn.status).toBe(201);
    this.#functionId = fn.json.id;
    const { rows } = await t.control.query<{ created_at: Date }>('select created_at from functions where id = $1', [this.#functionId]);
    this.#createdAt = rows[0]!.created_at.getTime();
  }

  /** Enqueues the dispatcher's tick as the crontab does, with its clock `minutes` ahead of the function's creation. */
  async tick(t: Topology, minutes: number): Promise<void> {
    const now = new Date(this.#createdAt + minutes * 60_000).toISOString();
    await t.control.query(`select graphile_worker.add_job('functions_cron_tick', json_build_object('now', $1::text))`, [now]);
    this.#ticks.push(minutes);
  }

  /** Waits until the worker runs slots of the function; those slots, and how many jobs it holds in all. */
  async running(t: Topology): Promise<{ slots: string[]; jobs: number }> {
    return waitFor(async () => {
      const { rows } = await t.control.query<{ slots: string[]; jobs: number }>(
        `select coalesce(array_agg(substr(key, length($1) + 1)) filter (where starts_with(key, $1)), '{}') as slots, count(*)::int as jobs
         from graphile_worker.jobs where locked_by is not null`,
        [`fncron:${this.#functionId}:`],
      );
      return rows[0]!.slots.length > 0 ? rows[0] : undefined;
    }, 20_000, 'a cron slot running');
  }

  /** The slots the ticks made due: every whole minute after the function's creation, up to the last tick. */
  expectedSlots(): string[] {
    const last = this.#createdAt + Math.max(...this.#ticks) * 60_000;
    const slots: string[] = [];
    for (let at = Math.floor(this.#createdAt / 60_000) * 60_000 + 60_000; at <= last; at += 60_000) slots.push(new Date(at).toISOString());
    return slots;
  }

  /**
   * Each due slot recorded exactly once; how many of `cut` (slots running when the worker was killed at `killedAt`)
   * were recorded after the kill, by a run on its successor; and the runs logged (a run cut by the kill logs nothing).
   */
  async verify(t: Topology, cut: readonly string[], killedAt: number): Promise<{ slots: number; rerun: number; runs: number; again: number }> {
    const expected = this.expectedSlots();
    const recorded = await waitFor(async () => {
      const res = await call(t.url, 'GET', `/v1/${this.#app.appId}/cron_runs?select=slot,ran_at&order=slot`, { key: this.#app.serviceKey });
      const got = (res.json as Array<{ slot: string; ran_at: string }>).map((r) => ({ slot: new Date(r.slot).toISOString(), ranAt: Date.parse(r.ran_at) }));
      return got.length >= expected.length ? got : undefined;
    }, SETTLE_MS, 'every cron slot recorded');
    expect(recorded.map((r) => r.slot)).toEqual(expected);
    const rerun = recorded.filter((r) => cut.includes(r.slot) && r.ranAt > killedAt).length;
    await waitFor(async () => {
      const { rows } = await t.control.query('select 1 from graphile_worker.jobs where key like $1', [`fncron:${this.#functionId}:%`]);
      return rows.length === 0 ? true : undefined;
    }, SETTLE_MS, 'no cron job left');
    const { rows } = await t.control.query<{ message: string }>(
      `select console->0->>'message' as message from function_logs where function_id = $1 and trigger = 'cron'`,
      [this.#functionId],
    );
    return { slots: recorded.length, rerun, runs: rows.length, again: rows.filter((r) => r.message?.startsWith('again')).length };
  }
}
