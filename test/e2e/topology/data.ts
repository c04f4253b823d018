// End-user data under row-level security in apps on both clusters, and the sign-up rate limit across both api
// processes.
import { expect } from 'vitest';
import type { Topology } from '../../helpers/topology.ts';
import { call, loop, Tally } from './client.ts';

export interface EndUser {
  id: string;
  token: string;
}

export interface TopologyApp {
  appId: string;
  /** The app's own host through the balancer ({subdomain}.localhost:<port>), where its functions answer. */
  hostUrl: string;
  serviceKey: string;
  region: string;
  users: EndUser[];
}

const NOTES = {
  tables: {
    notes: {
      columns: {
        id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' },
        user_id: { type: 'uuid', nullable: false },
        title: { type: 'text', nullable: false, unique: true },
      },
    },
  },
};

const PASSWORD = 'correct horse battery';

/** An app in `region` with an owner-only notes table and `users` signed-up end users. */
export async function createApp(t: Topology, name: string, region: string, users: number): Promise<TopologyApp> {
  const init = await call(t.url, 'POST', '/init', { key: t.platformKey, body: { name, region } });
  expect(init.status).toBe(201);
  expect(init.json.region).toBe(region);
  const hostUrl = `http://${init.json.subdomain}.localhost:${new URL(t.url).port}`;
  const app: TopologyApp = { appId: init.json.app_id, hostUrl, serviceKey: init.json.service_key.key, region, users: [] };
  const applied = await call(t.url, 'POST', `/v1/${app.appId}/schema/apply`, { key: app.serviceKey, body: { schema: NOTES, name: 'notes' } });
  expect(applied.status).toBe(200);
  for (let i = 0; i < users; i++) {
    const res = await call(t.url, 'POST', `/v1/${app.appId}/auth/signup`, { body: { email: `user${i}@${name.replace(/\W/g, '')}.test`, password: PASSWORD } });
    expect(res.status).toBe(201);
    app.users.push({ id: res.json.user.id, token: res.json.access_token });
  }
  return app;
}

/** Inserts notes as each end user until stopped; afterwards each user sees exactly their acknowledged notes. */
export class DataWrites {
  /** Notes written through the data API, and through a function. */
  readonly tally = new Tally();
  readonly functionTally = new Tally();
  readonly #apps: TopologyApp[];
  /** Per app and user: titles acknowledged, and titles sent without an answer (they may or may not be there). */
  readonly #acked = new Map<string, Set<string>>();
  readonly #maybe = new Map<string, Set<string>>();

  constructor(apps: TopologyApp[]) {
    this.#apps = apps;
    for (const app of apps) for (const u of app.users) (this.#acked.set(u.id, new Set()), this.#maybe.set(u.id, new Set()));
  }

  async run(t: Topology, running: () => boolean): Promise<void> {
    const targets = this.#apps.flatMap((app) => app.users.map((user) => ({ app, user })));
    await loop(running, 2, async (i) => {
      const { app, user } = targets[i % targets.length]!;
      const title = `${user.id}:${i}`;
      // Every third note is written by the app's function (ctx.data as the calling end user) on the app's own host,
      // the others directly through the data API.
      const viaFunction = i % 3 === 2;
      const tally = viaFunction ? this.functionTally : this.tally;
      const [base, path] = viaFunction ? [app.hostUrl, '/fn/note'] : [t.url, `/v1/${app.appId}/notes`];
      const outcome = await tally.attempt(() => call(base, 'POST', path, { key: user.token, body: { title }, headers: { prefer: 'return=minimal' } }));
      // A function's refusal may come after its insert went through (it answers for its own code); a refusal of the
      // data API means nothing was written.
      this.record(user.id, title, outcome.answer !== undefined, outcome.unknown || viaFunction);
    });
  }

  /** A note some client wrote: acknowledged, or possibly written (no answer, or a refusal that cannot promise none). */
  record(userId: string, title: string, acknowledged: boolean, possibly: boolean): void {
    if (acknowledged) this.#acked.get(userId)!.add(title);
    else if (possibly) this.#maybe.get(userId)!.add(title);
  }

  /** Every acknowledged note is there, nothing else of the user's is, and no user sees another's notes. */
  async verify(t: Topology): Promise<{ rows: number; users: number }> {
    let rows = 0;
    for (const app of this.#apps) {
      for (const user of app.users) {
        const seen = await allNotes(t, app, user);
        expect(seen.every((r) => r.user_id === user.id)).toBe(true);
        const titles = new Set(seen.map((r) => r.title));
        for (const title of this.#acked.get(user.id)!) expect(titles.has(title), `acknowledged note ${title}`).toBe(true);
        for (const title of titles) expect(this.#acked.get(user.id)!.has(title) || this.#maybe.get(user.id)!.has(title), `note ${title}`).toBe(true);
        rows += titles.size;
      }
    }
    return { rows, users: this.#apps.reduce((n, a) => n + a.users.length, 0) };
  }
}

/** Every note the user can read, a page (the data API's 1000 rows at most) at a time. */
async function allNotes(t: Topology, app: TopologyApp, user: EndUser): Promise<Array<{ title: string; user_id: string }>> {
  const rows: Array<{ title: string; user_id: string }> = [];
  for (;;) {
    const res = await call(t.url, 'GET', `/v1/${app.appId}/notes?select=title,user_id&order=title&limit=1000&offset=${rows.length}`, { key: user.token });
    expect(res.status).toBe(200);
    rows.push(...res.json);
    if (res.json.length < 1000) return rows;
  }
}

/**
 * A burst of sign-ups from one client address, alternating between the api processes. The limit is counted in the
 * control database per app, client and one-minute window: what each window accepted is min(hits, limit), whichever
 * process answered.
 */
export async function signupBurst(t: Topology, app: TopologyApp, limit: number, attempts: number): Promise<{ accepted: number; limited: number; windows: number }> {
  const from = '127.0.0.9';
  let accepted = 0;
  let limited = 0;
  for (let i = 0; i < attempts; i++) {
    const res = await call(t.url, 'POST', `/v1/${app.appId}/auth/signup`, { from, body: { email: `burst${i}@limit.test`, password: PASSWORD } });
    if (res.status === 201) accepted++;
    else {
      expect(res.status).toBe(429);
      expect(res.json.error.code).toBe('RATE_LIMITED');
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      limited++;
    }
  }
  const { rows } = await t.control.query<{ hits: number }>('select hits from rate_limits where bucket = $1', [`signup:${app.appId}:${from}`]);
  expect(rows.reduce((n, r) => n + r.hits, 0)).toBe(attempts);
  expect(accepted).toBe(rows.reduce((n, r) => n + Math.min(r.hits, limit), 0));
  expect(limited).toBe(attempts - accepted);
  return { accepted, limited, windows: rows.length };
}
