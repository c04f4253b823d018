// The physical limit for the data API as an end user: raw node:http + a pg Pool that sends the same
// transaction as the platform's runAs (begin; set local role svc_user; claims and timeout; the statement;
// commit) as ONE simple-protocol query, and answers with the JSON Postgres built.
//
// What it does per request, and nothing more: match the two routes, take the claims from the bearer token's
// payload (base64url-decoded, NOT verified: signature checks are part of what the platform costs), splice the
// id into the precompiled statement, one round trip, write the body.
//
// Env: DATABASE_URL (the app database), POOL_SIZE, APP_ID, TABLE, GET_TEMPLATE (the by-id statement in which
// the id's quoted literal is written as ID_PLACEHOLDER), ID_PLACEHOLDER, LIST_PATH (path + query string),
// LIST_STATEMENT.
// Listens on an ephemeral port and prints `ready <port>`.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { runAs } from '../src/data/executor.ts';
import { announce } from './sql.ts';
import { requiredEnv } from './harness.ts';


const pool = new pg.Pool({ connectionString: requiredEnv('DATABASE_URL'), max: Number(requiredEnv('POOL_SIZE')) });
pool.on('error', () => {});
const getParts = requiredEnv('GET_TEMPLATE').split(requiredEnv('ID_PLACEHOLDER'));
if (getParts.length !== 2) throw new Error('GET_TEMPLATE must hold ID_PLACEHOLDER exactly once');
const [getBefore, getAfter] = getParts as [string, string];
const byIdPrefix = `/v1/${requiredEnv('APP_ID')}/${requiredEnv('TABLE')}/`;
const listPath = requiredEnv('LIST_PATH');
const listStatement = requiredEnv('LIST_STATEMENT');

/** The platform's own one-round-trip transaction runner (plain pg), so both sides send the same text. */
const runAsUser = (claims: string, statement: string) => runAs(pool, { role: 'svc_user', claims }, statement, { write: false });

/** The JWT payload as the platform stringifies it: jose signs JSON.stringify(claims), so the segment is that text. */
function claimsOf(authorization: string | undefined): string | undefined {
  const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  const payload = token?.split('.')[1];
  return payload === undefined ? undefined : Buffer.from(payload, 'base64url').toString('utf8');
}

function send(res: http.ServerResponse, status: number, json: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json) });
  res.end(json);
}

const fail = (res: http.ServerResponse) => (err: unknown) => send(res, 500, JSON.stringify({ error: String(err) }));

const server = http.createServer((req, res) => {
  const url = req.url ?? '';
  if (req.method !== 'GET') return send(res, 404, '{"error":"not found"}');
  const claims = claimsOf(req.headers.authorization);
  if (claims === undefined) return send(res, 401, '{"error":"invalid token"}');
  if (url === listPath) {
    runAsUser(claims, listStatement).then((row) => {
      send(res, 200, row.body!, { 'content-range': `${row.rows ? `0-${row.rows - 1}` : '*'}/*` });
    }, fail(res));
    return;
  }
  if (url.startsWith(byIdPrefix) && !url.includes('?')) {
    const id = decodeURIComponent(url.slice(byIdPrefix.length));
    runAsUser(claims, getBefore + pg.escapeLiteral(id) + getAfter).then((row) => {
      // The array of exactly one row is `[<object>]`: the object is the text between the brackets.
      if (row.rows === 0) return send(res, 404, '{"error":"not found"}');
      send(res, 200, row.body!.slice(1, -1));
    }, fail(res));
    return;
  }
  send(res, 404, '{"error":"not found"}');
});

server.listen(0, '127.0.0.1', () => announce((server.address() as AddressInfo).port));
process.on('SIGTERM', () => {
  server.close(() => void pool.end().then(() => process.exit(0)));
  server.closeAllConnections();
});
