// What the meetings tests share: an app's webhook receiver on loopback that checks x-svc-signature as an app would,
// and the account's credit as the tests arrange it.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Forwarded {
  event: string | undefined;
  signature: string | undefined;
  delivery: string | undefined;
  contentType: string | undefined;
  raw: string;
  body: any;
}

export interface Receiver {
  url: string;
  received: Forwarded[];
  /** Statuses to answer next, in order (200 once empty). */
  answers: number[];
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Forwarded[] = [];
  const answers: number[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const h = (name: string) => req.headers[name] as string | undefined;
      received.push({ event: h('x-svc-event'), signature: h('x-svc-signature'), delivery: h('x-svc-delivery'), contentType: h('content-type'), raw, body: JSON.parse(raw) });
      res.writeHead(answers.shift() ?? 200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/meetings-hook`,
    received,
    answers,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A receiver's check, as the guide shows it: "v1," + base64 HMAC-SHA256 of the raw body, compared in constant time. */
export function signatureValid(secret: string, raw: string, header: string | undefined): boolean {
  const expected = Buffer.from(`v1,${createHmac('sha256', secret).update(raw).digest('base64')}`);
  const given = Buffer.from(header ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

type Sql = (text: string, params?: unknown[]) => Promise<any[]>;

/** Sets the account's credit balance (its plan grant counted as made) and drops what calls in flight hold. */
export async function setBalance(sql: Sql, accountId: string, usd: number): Promise<void> {
  const nanos = Math.round(usd * 1e9);
  await sql(`insert into credit_ledger (account_id, kind, amount_nanos, source, grant_key) values ($1, 'grant', 0, 'test', 'free:lifetime') on conflict do nothing`, [accountId]);
  await sql(`delete from credit_reservations where account_id = $1`, [accountId]);
  await sql(
    `insert into credit_balances (account_id, balance_nanos) values ($1, $2) on conflict (account_id) do update set balance_nanos = $2, reserved_nanos = 0`,
    [accountId, nanos],
  );
}

export async function balanceNanos(sql: Sql, accountId: string): Promise<{ balance: number; reserved: number }> {
  const rows = await sql(`select balance_nanos::text as b, reserved_nanos::text as r from credit_balances where account_id = $1`, [accountId]);
  return { balance: Number(rows[0]?.b ?? 0), reserved: Number(rows[0]?.r ?? 0) };
}
