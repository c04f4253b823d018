// A Postgres peer that sends what pg's protocol parser cannot take: the parser throws inside the socket's
// 'data' listener, which would be an uncaught exception (the process dies) without the guarded socket.
import net from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClient, createPool } from '../../src/db/pg.ts';

let server: net.Server;
let url: string;

beforeAll(async () => {
  server = net.createServer((socket) => {
    socket.once('data', () => {
      // An authentication request ('R') of a kind that does not exist: the parser throws on it.
      const msg = Buffer.alloc(9);
      msg.write('R', 0);
      msg.writeInt32BE(8, 1);
      msg.writeInt32BE(99, 5);
      socket.write(msg);
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `postgres://postgres@127.0.0.1:${(server.address() as net.AddressInfo).port}/x`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

it('a protocol failure fails the connection attempt of a client, not the process', async () => {
  await expect(createClient(url).connect()).rejects.toThrow('Unknown authenticationOk message type 99');
});

it('a protocol failure fails the query of a pool, not the process', async () => {
  const pool = createPool({ connectionString: url, max: 2 });
  await expect(pool.query('select 1')).rejects.toThrow('Unknown authenticationOk message type 99');
  await pool.end();
});
