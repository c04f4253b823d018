// The substrate change stream end to end: two api processes on one control database (as `npm start` runs them),
// a browser-style client holding only a ticket, frames for every covered table fanned out across processes through
// LISTEN/NOTIFY, org isolation, each substrate user's own changes only, and tickets that work once and only for 60
// seconds.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseUrl } from '../helpers/db.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { request, signUpOwner, substrateKeyOf, type SignedInPerson } from './e2e-helpers.ts';

let a: SpawnedServer;
let b: SpawnedServer;
let owner: SignedInPerson;
let key: string;

interface Frame {
  type?: string;
  org?: string;
  op?: string;
  tbl?: string;
  id?: string;
}

/** A connected stream socket and the frames it has received so far. */
async function connect(server: SpawnedServer, ticket: string): Promise<{ ws: WebSocket; frames: Frame[] }> {
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/v1/me/substrate/stream?ticket=${encodeURIComponent(ticket)}`);
  const frames: Frame[] = [];
  ws.on('message', (data) => frames.push(JSON.parse(data.toString()) as Frame));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, res) => reject(new Error(`status ${res.statusCode}`)));
    ws.once('error', reject);
  });
  return { ws, frames };
}

async function ticket(server: SpawnedServer, k = key): Promise<string> {
  const res = await request(server.url, '/v1/me/substrate/ws-ticket', { method: 'POST', key: k });
  expect(res.status).toBe(201);
  expect(res.json).toEqual({ ticket: expect.stringMatching(/^wst_/), expires_in: 60 });
  return res.json.ticket;
}

async function waitFor(frames: Frame[], pred: (f: Frame) => boolean): Promise<Frame> {
  const until = Date.now() + 10_000;
  for (;;) {
    const hit = frames.find(pred);
    if (hit) return hit;
    if (Date.now() > until) throw new Error(`no such frame; got ${JSON.stringify(frames)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const propose = (server: SpawnedServer, body: unknown, k = key) => request(server.url, '/v1/me/substrate/actions/propose', { method: 'POST', key: k, body });

/** A substrate key of the account (and substrate user, when `usr` is set) that `place` inserts and returns. */
async function keyOf(place: (control: pg.Client) => Promise<pg.QueryResult<{ account: string; usr: string | null }>>): Promise<string> {
  const control = new pg.Client({ connectionString: databaseUrl(a.controlDb) });
  await control.connect();
  const other = `svc_sub_${randomBytes(32).toString('base64url')}`;
  try {
    const { account, usr } = (await place(control)).rows[0]!;
    // A key is a person's: a new one of that account, for the substrate user named (else a new one of theirs).
    await control.query(
      `with person as (insert into persons (email) values ('person-' || gen_random_uuid() || '@example.com') returning id),
            usr as (insert into substrate_users (account_id, name, person_id) select $1, 'person', id from person where $3::uuid is null returning id)
       insert into substrate_keys (account_id, key_hash, hint, name, substrate_user_id, created_by)
       select $1, encode(sha256($2::bytea), 'hex'), 'x', 'other', coalesce($3::uuid, (select id from usr)), (select id from person)`,
      [account, other, usr],
    );
  } finally {
    await control.end();
  }
  return other;
}

/**
 * Sockets of `key` (on process a) and of `otherKey` (on process b) each get the frames of their own writes and never
 * the other's; the frame each saw of its own write.
 */
async function expectApart(otherKey: string): Promise<{ own: { seen: Frame }; other: { seen: Frame } }> {
  const mine = await connect(a, await ticket(a));
  const theirs = await connect(b, await ticket(b, otherKey));
  try {
    const other = await propose(a, { capability: 'record_learning', payload: { title: 'Theirs', description: 'not yours' } }, otherKey);
    const theirSeen = await waitFor(theirs.frames, (f) => f.id === other.json.result.learning_id);
    const own = await propose(a, { capability: 'record_learning', payload: { title: 'Mine', description: 'mine' } });
    const mySeen = await waitFor(mine.frames, (f) => f.id === own.json.result.learning_id);
    expect(mine.frames.some((f) => f.id === other.json.result.learning_id || f.id === other.json.action_id)).toBe(false);
    expect(theirs.frames.some((f) => f.id === own.json.result.learning_id || f.id === own.json.action_id)).toBe(false);
    return { own: { seen: mySeen }, other: { seen: theirSeen } };
  } finally {
    mine.ws.close();
    theirs.ws.close();
  }
}

beforeAll(async () => {
  a = await spawnServer({ SVC_ROLE: 'api', SVC_WS_RECHECK_SECONDS: '1' });
  b = await spawnServer({ SVC_ROLE: 'api', SVC_PLATFORM_API_KEY: a.platformKey, SVC_APP_DB_PREFIX: a.appDbPrefix }, { controlDb: a.controlDb });
  owner = await signUpOwner(a);
  key = (await substrateKeyOf(a, owner, 'human')).key;
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

/** The close code of a socket, once it closes (within `ms`). */
function closed(ws: WebSocket, ms = 5000): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the socket stayed open')), ms);
    ws.once('close', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

describe('sockets do not outlive their keys', () => {
  it('revoking the key that minted a stream ticket closes its socket (1008); another key\'s socket stays open', async () => {
    const created = await substrateKeyOf(a, owner, 'short');
    const doomed = await connect(a, await ticket(a, created.key));
    const kept = await connect(a, await ticket(a));
    try {
      const closing = closed(doomed.ws);
      expect((await request(a.url, `/substrate-keys/${created.id}`, { method: 'DELETE', key: a.platformKey })).status).toBeLessThan(300);
      expect(await closing).toBe(1008);
      await new Promise((r) => setTimeout(r, 1500));
      expect(kept.ws.readyState).toBe(WebSocket.OPEN);
      // A ticket minted just before the revocation opens nothing after it.
      const again = await substrateKeyOf(a, owner, 'brief');
      const early = await ticket(a, again.key);
      expect((await request(a.url, `/substrate-keys/${again.id}`, { method: 'DELETE', key: a.platformKey })).status).toBeLessThan(300);
      await expect(connect(a, early)).rejects.toThrow('status 401');
    } finally {
      kept.ws.close();
    }
  });

  it("revoking a service key closes the function sockets opened with it; deleting the app closes the others", async () => {
    const app = (await request(a.url, '/init', { method: 'POST', key: a.platformKey, body: { name: 'sockets' } })).json;
    const second = (await request(a.url, `/apps/${app.app_id}/keys`, { method: 'POST', key: a.platformKey, body: { name: 'ws' } })).json;
    const open = async (token?: string) => {
      const ws = new WebSocket(`${a.url.replace('http', 'ws')}/v1/${app.app_id}/ws${token ? `?token=${token}` : ''}`);
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('error', reject);
      });
      return ws;
    };
    const withKey = await open(second.key);
    const anonymous = await open();
    const keyClosed = closed(withKey);
    expect((await request(a.url, `/apps/${app.app_id}/keys/${second.id}`, { method: 'DELETE', key: a.platformKey })).status).toBeLessThan(300);
    expect(await keyClosed).toBe(1008);
    expect(anonymous.readyState).toBe(WebSocket.OPEN);
    const appClosed = closed(anonymous);
    expect((await request(a.url, `/apps/${app.app_id}`, { method: 'DELETE', key: a.platformKey })).status).toBe(200);
    expect(await appClosed).toBe(1008);
  });
});

describe('substrate change stream', () => {
  it('says hello, then a frame per committed change of every covered table, also for writes through another process', async () => {
    const { ws, frames } = await connect(a, await ticket(a));
    try {
      await waitFor(frames, (f) => f.type === 'hello');
      const decision = await propose(b, { capability: 'record_decision', payload: { title: 'Streamed', kind: 'operational' } });
      const commitment = await propose(b, { capability: 'record_commitment', payload: { description: 'Stream it', status: 'confirmed' } });
      const learning = await propose(a, { capability: 'record_learning', payload: { title: 'Frames', description: 'arrive' } });
      const entity = await propose(b, { capability: 'upsert_entity', payload: { type: 'person', display_name: 'Fox' } });
      const dec = await waitFor(frames, (f) => f.tbl === 'decisions' && f.id === decision.json.result.decision_id);
      expect(dec).toEqual({ org: expect.any(String), op: 'insert', tbl: 'decisions', id: decision.json.result.decision_id });
      await waitFor(frames, (f) => f.tbl === 'commitments' && f.id === commitment.json.result.commitment_id);
      await waitFor(frames, (f) => f.tbl === 'learnings' && f.id === learning.json.result.learning_id);
      await waitFor(frames, (f) => f.tbl === 'entities' && f.id === entity.json.result.entity_id);
      await waitFor(frames, (f) => f.tbl === 'action_ledger' && f.op === 'insert' && f.id === decision.json.action_id);
      // An update and a delete: the revert deletes the learning and updates the reverted action.
      await propose(b, { capability: 'revert_action', payload: { action_id: learning.json.action_id } });
      await waitFor(frames, (f) => f.tbl === 'learnings' && f.op === 'delete' && f.id === learning.json.result.learning_id);
      await waitFor(frames, (f) => f.tbl === 'action_ledger' && f.op === 'update' && f.id === learning.json.action_id);
    } finally {
      ws.close();
    }
  });

  it("an org sees only its own changes", async () => {
    const otherKey = await keyOf((control) => control.query(`insert into accounts (name) values ('other') returning id as account, null::uuid as usr`));
    const { own, other } = await expectApart(otherKey);
    // Each org's frame names its own org.
    expect(own.seen.org).not.toBe(other.seen.org);
  });

  it("a socket gets its own substrate user's changes only, not another member's of the same org", async () => {
    const memberKey = await keyOf((control) =>
      control.query(
        `insert into substrate_users (account_id, name)
         select account_id, 'member' from substrate_keys where key_hash = encode(sha256($1::bytea), 'hex') returning account_id as account, id as usr`,
        [key],
      ),
    );
    const { own, other } = await expectApart(memberKey);
    // The frames keep the spec's shape: the org, not the user they were routed by.
    expect(Object.keys(other.seen).sort()).toEqual(['id', 'op', 'org', 'tbl']);
    expect(other.seen.org).toBe(own.seen.org);
  });

  it('a ticket works once and for 60 seconds; a forged one is refused before the upgrade', async () => {
    const t = await ticket(a);
    const first = await connect(a, t);
    first.ws.close();
    await expect(connect(b, t)).rejects.toThrow('status 401');
    await expect(connect(a, 'wst_forged')).rejects.toThrow('status 401');
    const stale = await ticket(a);
    const control = new pg.Client({ connectionString: databaseUrl(a.controlDb) });
    await control.connect();
    await control.query(`update substrate_ws_tickets set expires_at = now() - interval '1 second' where used_at is null`);
    await control.end();
    await expect(connect(a, stale)).rejects.toThrow('status 401');
    const bad = await request(a.url, '/v1/me/substrate/stream', { headers: { connection: 'upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' } });
    expect(bad.status).toBe(401);
    expect(bad.json.error.code).toBe('AUTH_INVALID_TOKEN');
  });

  it('when the LISTEN connection is lost, sockets are closed with 1012 (reconnect and re-fetch) and new ones get frames again', async () => {
    const { ws, frames } = await connect(a, await ticket(a));
    await waitFor(frames, (f) => f.type === 'hello');
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    const control = new pg.Client({ connectionString: databaseUrl(a.controlDb) });
    await control.connect();
    try {
      // Both processes' LISTEN connections: a failover or restart as the platform would see it.
      await control.query(`select pg_terminate_backend(pid) from pg_stat_activity where query = 'listen svc_substrate'`);
    } finally {
      await control.end();
    }
    expect(await closed).toBe(1012);
    // The process listens again within about a second; a fresh connection sees new changes.
    const deadline = Date.now() + 15_000;
    for (;;) {
      const again = await connect(a, await ticket(a));
      try {
        const learning = await propose(b, { capability: 'record_learning', payload: { title: 'After', description: 'the reconnect' } });
        const got = await Promise.race([
          waitFor(again.frames, (f) => f.id === learning.json.result.learning_id).then(
            () => true,
            () => false,
          ),
          new Promise<boolean>((r) => setTimeout(() => r(false), 1_500)),
        ]);
        if (got) break;
      } finally {
        again.ws.close();
      }
      if (Date.now() > deadline) throw new Error('the stream did not recover');
    }
  });
});

