// The physical limit for GET /apps: raw node:http + pg, the same two queries, the same JSON.
// Env: DATABASE_URL, BASE_URL, APPS_DOMAIN. Listens on an ephemeral port and prints `ready <port>`.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { requiredEnv } from './harness.ts';
import { announce, appHosts, listApps, openPool } from './sql.ts';

const pool = openPool(requiredEnv('DATABASE_URL'));
const hosts = appHosts(requiredEnv('BASE_URL'), requiredEnv('APPS_DOMAIN'));

function send(res: http.ServerResponse, status: number, body: unknown): void {
  const json = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json) });
  res.end(json);
}

const server = http.createServer((req, res) => {
  if (req.method !== 'GET' || req.url !== '/apps') return send(res, 404, { error: 'not found' });
  listApps(pool, req.headers.authorization, hosts).then(
    (out) => (out ? send(res, 200, out) : send(res, 401, { error: 'invalid token' })),
    (err: unknown) => send(res, 500, { error: String(err) }),
  );
});

server.listen(0, '127.0.0.1', () => announce((server.address() as AddressInfo).port));
process.on('SIGTERM', () => {
  server.close(() => void pool.end().then(() => process.exit(0)));
  server.closeAllConnections();
});
