// AI and RAG in the topology: chat completions against the fake upstream through either api process, and documents
// ingested by the worker (embeddings through the same gateway). Afterwards the account's credits add up: the balance
// is the sum of its ledger, each billed usage row has exactly one charge of exactly its cost, every answered call was
// billed, and what is still held belongs to calls cut by a killed process.
import pg from 'pg';
import { expect } from 'vitest';
import { databaseUrl } from '../../helpers/db.ts';
import { SECOND_REGION, type Topology } from '../../helpers/topology.ts';
import { waitFor } from '../../integration/frontend-helpers.ts';
import { call, loop, SETTLE_MS, sleep, Tally, WORKER_CONCURRENCY } from './client.ts';
import type { TopologyApp } from './data.ts';

/** Between two chat calls. */
const PACE_MS = 50;

export class AiCalls {
  readonly tally = new Tally();
  readonly #app: TopologyApp;

  constructor(app: TopologyApp) {
    this.#app = app;
  }

  async run(t: Topology, running: () => boolean): Promise<void> {
    await loop(running, 1, async (i) => {
      const answer = await this.tally.run(() =>
        call(t.url, 'POST', `/v1/${this.#app.appId}/chat/completions`, {
          key: this.#app.serviceKey,
          body: { model: 'openai/gpt-4o-mini', max_tokens: 16, messages: [{ role: 'user', content: `hello number ${i}` }] },
        }),
      );
      if (answer) expect(answer.json.choices[0].message.content).toBe(`echo: hello number ${i}`);
      // Paced: the account is on the free plan, whose $0.10 of credit a busy loop would spend within the run.
      await sleep(PACE_MS);
    });
  }
}

export class RagIngestion {
  readonly tally = new Tally();
  readonly #app: TopologyApp;
  readonly #documents: string[] = [];
  /** Ingest requests that may have created a document without saying so (no answer, or a 503). */
  #uncertain = 0;

  constructor(app: TopologyApp) {
    this.#app = app;
  }

  async createCollection(t: Topology): Promise<void> {
    const res = await call(t.url, 'POST', `/v1/${this.#app.appId}/rag/collections`, { key: this.#app.serviceKey, body: { name: 'docs', chunkSize: 64, chunkOverlap: 8 } });
    expect(res.status).toBe(201);
  }

  /** A document every `everyMs`: each is ingested by the worker, whichever api process accepted it. */
  async run(t: Topology, running: () => boolean, everyMs: number): Promise<void> {
    await loop(running, 1, async (i) => {
      const text = `Document ${i}. ${'The topology test writes words so that the document has a few chunks. '.repeat(6)}`;
      const outcome = await this.tally.attempt(() => call(t.url, 'POST', `/v1/${this.#app.appId}/rag/collections/docs/ingest`, { key: this.#app.serviceKey, body: { text } }));
      if (outcome.answer) this.#documents.push(outcome.answer.json.documentId);
      else if (outcome.unknown) this.#uncertain++;
      await sleep(everyMs);
    });
  }

  /**
   * Every accepted document (and any an unanswered request created) becomes ready once: its chunks exactly those it
   * counts, none twice.
   */
  async verify(t: Topology): Promise<{ documents: number; chunks: number; embeddingCalls: number }> {
    const app = new pg.Client({ connectionString: appDatabaseUrl(t, this.#app) });
    await app.connect();
    try {
      const stored = async () =>
        (await app.query<{ id: string; status: string; chunk_count: number; chunks: number }>(
          `select d.id, d.status, d.chunk_count, (select count(*)::int from svc_rag.chunks c where c.document_id = d.id) as chunks from svc_rag.documents d`,
        )).rows;
      const rows = await waitFor(async () => {
        const now = await stored();
        return now.every((r) => r.status === 'ready' || r.status === 'failed') ? now : undefined;
      }, 90_000, 'every document ingested');
      const ids = new Set(rows.map((r) => r.id));
      for (const id of this.#documents) expect(ids.has(id), `accepted document ${id}`).toBe(true);
      expect(rows.length).toBeLessThanOrEqual(this.#documents.length + this.#uncertain);
      for (const row of rows) {
        expect(row.status, `status of ${row.id}`).toBe('ready');
        expect(row.chunks, `chunks of ${row.id}`).toBe(row.chunk_count);
      }
      const { rows: calls } = await t.control.query<{ n: number }>(`select count(*)::int as n from ai_usage where app_id = $1 and kind = 'embedding' and status = 'ok'`, [this.#app.appId]);
      return { documents: rows.length, chunks: rows.reduce((n, r) => n + r.chunks, 0), embeddingCalls: calls[0]!.n };
    } finally {
      await app.end();
    }
  }
}

function appDatabaseUrl(t: Topology, app: TopologyApp): string {
  const name = `${t.appDbPrefix}${app.appId}`;
  return app.region === SECOND_REGION ? `${t.cluster2.url}/${name}` : databaseUrl(name);
}

/**
 * The account's money after the run: the balance is the sum of the ledger; every billed usage row has exactly one
 * charge covering exactly its cost and no charge lacks its usage row; every answered chat was billed; and what is
 * still reserved matches the open reservations, each of a call a killed process cut.
 */
export async function verifyCredits(t: Topology, appId: string, ai: AiCalls): Promise<{ charges: number; spentNanos: bigint; open: number }> {
  const q = async <T extends pg.QueryResultRow>(text: string, params: unknown[]) => (await t.control.query<T>(text, params)).rows;
  const account = (await q<{ account_id: string }>('select account_id from apps where id = $1', [appId]))[0]!.account_id;
  // Calls answered just before the stop are recorded by then; in-flight ones of live processes settle within seconds.
  const billed = await waitFor(async () => {
    const n = (await q<{ n: number }>(`select count(*)::int as n from ai_usage where app_id = $1 and kind = 'chat' and status = 'ok'`, [appId]))[0]!.n;
    return n >= ai.tally.acknowledged ? n : undefined;
  }, SETTLE_MS, 'every answered chat billed');
  expect(billed).toBeLessThanOrEqual(ai.tally.acknowledged + ai.tally.uncertain);

  const [balance] = await q<{ balance: string; ledger: string; reserved: string; open: string; open_count: number }>(
    `select b.balance_nanos::text as balance, b.reserved_nanos::text as reserved,
       (select coalesce(sum(amount_nanos), 0)::text from credit_ledger l where l.account_id = b.account_id) as ledger,
       (select coalesce(sum(amount_nanos), 0)::text from credit_reservations r where r.account_id = b.account_id) as open,
       (select count(*)::int from credit_reservations r where r.account_id = b.account_id) as open_count
     from credit_balances b where b.account_id = $1`,
    [account],
  );
  expect(balance!.balance).toBe(balance!.ledger);
  expect(balance!.reserved).toBe(balance!.open);
  expect(BigInt(balance!.balance)).toBeGreaterThanOrEqual(BigInt(balance!.reserved));
  expect(balance!.open_count).toBeLessThanOrEqual(ai.tally.uncertain + WORKER_CONCURRENCY);

  const unbalanced = await q(
    `select u.id from ai_usage u left join credit_ledger l on l.usage_ref = 'ai_usage:' || u.id and l.kind = 'charge'
     where u.account_id = $1 and not u.own_key and u.cost_nanos > 0
     group by u.id, u.cost_nanos
     having count(l.id) <> 1 or coalesce(sum(-l.amount_nanos + l.shortfall_nanos + l.overage_nanos), 0) <> u.cost_nanos`,
    [account],
  );
  expect(unbalanced).toEqual([]);
  const orphans = await q(
    `select l.id from credit_ledger l where l.account_id = $1 and l.kind = 'charge'
       and not exists (select 1 from ai_usage u where 'ai_usage:' || u.id = l.usage_ref)`,
    [account],
  );
  expect(orphans).toEqual([]);
  const [charges] = await q<{ n: number; spent: string }>(
    `select count(*)::int as n, coalesce(-sum(amount_nanos), 0)::text as spent from credit_ledger where account_id = $1 and kind = 'charge'`,
    [account],
  );
  return { charges: charges!.n, spentNanos: BigInt(charges!.spent), open: balance!.open_count };
}
