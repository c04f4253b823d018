// A template's seed rows, pinned when it is published (a snapshot in the control database) and copied from there into
// each clone: a clone never reads the template's live tables, so rows written after publishing never cross, and end
// users' rows cross only when the publisher lists their table. Rows travel as JSON text, in pieces of at most 256 KiB
// grouped into batches of about 1 MiB by Postgres, so neither publishing nor cloning holds a seed in the process.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import type { AppSql } from '../apps/app-databases.ts';
import type { ControlDatabase } from '../db/types.ts';
import { USER_ID } from '../schema/table-info.ts';
import { templateErrors } from './errors.ts';
import { errors } from '../core/errors.ts';
import type { TemplateOptions } from './types.ts';

/** Rows one seed table may pin (a template's seed data, not a dump). */
export const SEED_MAX_ROWS = 10_000;
/** The JSON text of all of a template's seed rows together. */
export const SEED_MAX_BYTES = 64 * 1024 * 1024;
/** Bytes of a row's JSON per piece, and of pieces per batch. */
const PIECE_BYTES = 256 * 1024;
const BATCH_BYTES = 1024 * 1024;
/** The cursor the snapshot reads a table through, in the template's database. */
const CURSOR = 'svc_seed_snapshot';

/** One table of a snapshot, in copy order (template_seed_snapshots.tables). */
export interface SnapshotTable {
  name: string;
  rows: number;
  bytes: number;
  batches: number;
  /** The columns pinned: every stored column but user_id (no end user crosses). */
  columns: string[];
}

export interface SeedSnapshot {
  id: string;
  tables: SnapshotTable[];
  digest: string;
}

/**
 * How a branch's sample differs from a template's seed (src/branches/service.ts): end users' rows keep their user_id
 * (an id the branch's own end users never have), the named text columns are masked, and at most `limit` rows of each
 * table are taken (in key order).
 */
export interface SampleOptions {
  keepUserId: boolean;
  /** A random key (hex) of this snapshot's mask: a masked value cannot be matched against guesses without it. */
  maskKey: string;
  mask: Readonly<Record<string, readonly string[]>>;
  limit?: number | undefined;
}

/** What a table's rows are, as the snapshot reads them: the columns, the owner filter and the order. */
interface TableShape {
  name: string;
  columns: string[];
  /** Columns whose values are replaced by a keyed digest (sample.mask), and the snapshot's key for it (hex). */
  masked: string[];
  maskKey: string;
  limit: number | undefined;
  /** SQL keeping the publisher's rows (end users' and their groups' left out), or null to keep every row. */
  publisherRows: string | null;
  /** Primary-key columns (the order rows are pinned in, so that the same rows give the same digest). */
  key: string[];
}

const q = (name: string) => pg.escapeIdentifier(name);

/**
 * Pins the rows of the options' seed tables, in their order, into a new snapshot written through `tx` (the publish's
 * transaction: a refused or failed snapshot leaves nothing). Rows an end user owns (a user_id set, or the column of a
 * group the table's access names) are left out unless the table is in seed_end_user_rows; user_id is never pinned.
 * Over SEED_MAX_ROWS rows in a table or SEED_MAX_BYTES in all is a 413, measured before a row is read.
 */
export async function takeSeedSnapshot(tx: Kysely<ControlDatabase>, app: AppSql, appId: string, options: TemplateOptions, sample?: SampleOptions): Promise<SeedSnapshot | null> {
  const names = options.seed_tables ?? [];
  if (!names.length) return null;
  const withEndUsers = new Set(options.seed_end_user_rows ?? []);
  return app.transaction(
    async (client) => {
      const shapes = await Promise.all(names.map((name) => tableShape(client, name, withEndUsers.has(name), sample)));
      const sizes = await measure(client, shapes);
      const { id } = await tx
        .insertInto('template_seed_snapshots')
        .values({ app_id: appId, tables: '[]', bytes: sizes.reduce((n, s) => n + s.bytes, 0), digest: '' })
        .returning('id')
        .executeTakeFirstOrThrow();
      const digest = createHash('sha256');
      const tables: SnapshotTable[] = [];
      for (const [i, shape] of shapes.entries()) {
        const batches = await copyBatches(client, tx, id, shape, (md5) => digest.update(`${shape.name}:${md5}\n`));
        tables.push({ name: shape.name, rows: sizes[i]!.rows, bytes: sizes[i]!.bytes, batches, columns: shape.columns });
      }
      const snapshot = { id, tables, digest: digest.update(JSON.stringify(tables)).digest('hex') };
      await tx.updateTable('template_seed_snapshots').set({ tables: JSON.stringify(tables), digest: snapshot.digest }).where('id', '=', id).execute();
      return snapshot;
    },
    // One view of every seed table: references between them hold in the snapshot.
    { setup: 'set transaction isolation level repeatable read, read only' },
  );
}

/** Types whose values a sample may mask: a masked value is text. */
const MASKABLE = /^(text|character varying(\(\d+\))?|citext)$/;

async function tableShape(client: pg.ClientBase, name: string, withEndUsers: boolean, sample: SampleOptions | undefined): Promise<TableShape> {
  const table = `public.${q(name)}`;
  const [columns, key, access] = await Promise.all([
    client.query<{ name: string; notnull: boolean; type: string }>(
      `select attname as name, attnotnull as notnull, format_type(atttypid, atttypmod) as type from pg_attribute
        where attrelid = $1::regclass and attnum > 0 and not attisdropped and attgenerated = '' order by attnum`,
      [table],
    ),
    client.query<{ name: string }>(
      `select a.attname as name from pg_index i join unnest(i.indkey::int2[]) with ordinality k(attnum, ord) on true
       join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum where i.indrelid = $1::regclass and i.indisprimary order by k.ord`,
      [table],
    ),
    client.query<{ group_column: string | null }>(
      `select case when access = 'group' then group_access->>'column' end as group_column from svc_meta.table_access where table_name = $1`,
      [name],
    ),
  ]);
  const all = columns.rows.map((c) => c.name);
  const keepUserId = sample?.keepUserId === true;
  if (withEndUsers && !keepUserId && columns.rows.some((c) => c.name === USER_ID && c.notnull)) throw templateErrors.seedUserIdRequired(name);
  const masked = [...(sample?.mask[name] ?? [])];
  for (const column of masked) {
    const info = columns.rows.find((c) => c.name === column);
    if (!info) throw errors.validation(`Table '${name}' has no column '${column}' to mask.`, [{ path: `data.sample.${name}.mask`, message: 'not a column' }]);
    if (!MASKABLE.test(info.type)) throw errors.validation(`Column '${name}.${column}' is ${info.type}; only text columns can be masked.`, [{ path: `data.sample.${name}.mask`, message: 'not text' }]);
  }
  // The owner columns: user_id, which the platform fills with the writing end user, and the group's column.
  const owners = [all.includes(USER_ID) ? USER_ID : null, access.rows[0]?.group_column ?? null].filter((c): c is string => c !== null && all.includes(c));
  return {
    name,
    columns: keepUserId ? all : all.filter((c) => c !== USER_ID),
    masked,
    maskKey: sample?.maskKey ?? '',
    limit: sample?.limit,
    publisherRows: withEndUsers || !owners.length ? null : owners.map((c) => `${q(c)} is null`).join(' and '),
    key: key.rows.map((k) => k.name),
  };
}

/** The pinned rows of a table as a query of their JSON texts (doc), numbered in key order (r). */
function documentsSql(shape: TableShape): string {
  const select = shape.columns.map((c) => (shape.masked.includes(c) ? `${maskSql(q(c), shape.maskKey)} as ${q(c)}` : q(c))).join(', ');
  const keyOrder = shape.key.map(q).join(', ');
  const limit = shape.limit === undefined ? '' : `${keyOrder ? ` order by ${keyOrder}` : ''} limit ${shape.limit}`;
  const rows = `select ${select} from public.${q(shape.name)}${shape.publisherRows ? ` where ${shape.publisherRows}` : ''}${limit}`;
  const order = shape.key.length ? `order by ${shape.key.map((k) => `x.${q(k)}`).join(', ')}` : '';
  return `select row_number() over (${order}) as r, row_to_json(x)::text as doc from (${rows}) x`;
}

/**
 * A masked value: an HMAC of it under the snapshot's random key (pgcrypto), so equal values stay equal (and unique
 * ones unique) within the copy while no guess can be checked against it; an e-mail address stays one, at
 * example.invalid. Null stays null.
 */
function maskSql(column: string, keyHex: string): string {
  if (!/^[0-9a-f]{64}$/.test(keyHex)) throw new Error('a mask key is 32 random bytes in hex');
  const digest = `left(encode(hmac(convert_to(${column}::text, 'UTF8'), decode('${keyHex}', 'hex'), 'sha256'), 'hex'), 12)`;
  return `case when ${column} is null then null when ${column}::text like '%@%' then 'masked-' || ${digest} || '@example.invalid' else 'masked-' || ${digest} end`;
}

/** Rows and bytes of each table's pinned rows, counted by Postgres; past a limit, the refusal names it. */
async function measure(client: pg.ClientBase, shapes: TableShape[]): Promise<Array<{ rows: number; bytes: number }>> {
  const sizes: Array<{ rows: number; bytes: number }> = [];
  for (const shape of shapes) {
    const { rows } = await client.query<{ rows: string; bytes: string }>(
      `select count(*)::text as rows, coalesce(sum(octet_length(doc)), 0)::text as bytes from (${documentsSql(shape)}) d`,
    );
    const size = { rows: Number(rows[0]!.rows), bytes: Number(rows[0]!.bytes) };
    if (size.rows > SEED_MAX_ROWS) throw templateErrors.seedTooManyRows(shape.name, size.rows, SEED_MAX_ROWS);
    sizes.push(size);
  }
  const bytes = sizes.reduce((n, s) => n + s.bytes, 0);
  if (bytes > SEED_MAX_BYTES) throw templateErrors.seedTooLarge(bytes, SEED_MAX_BYTES);
  return sizes;
}

/**
 * A table's pinned rows into template_seed_batches, one batch per round trip: Postgres splits each row's JSON into
 * pieces and groups the pieces into batches of about BATCH_BYTES, each a JSON array of {r, p, s} (row, piece, the
 * piece's bytes in base64). Pieces are cut by bytes, which is linear where cutting text by characters is quadratic
 * (a character's offset is counted from the start), and a cut may fall inside a character: the clone joins the bytes
 * before reading them as text. The pieces are materialized first so that the sort carries them, not whole rows.
 */
async function copyBatches(client: pg.ClientBase, tx: Kysely<ControlDatabase>, snapshotId: string, shape: TableShape, onBatch: (md5: string) => void): Promise<number> {
  await client.query(
    `declare ${CURSOR} no scroll cursor for
     with pieces as materialized (
       select d.r, i as p, substring(d.bytes from i * ${PIECE_BYTES} + 1 for ${PIECE_BYTES}) as s
         from (select r, convert_to(doc, 'UTF8') as bytes from (${documentsSql(shape)}) t) d,
              generate_series(0, (octet_length(d.bytes) - 1) / ${PIECE_BYTES}) i
     ), numbered as (
       select r, p, s, (sum(octet_length(s)) over (order by r, p) - octet_length(s)) / ${BATCH_BYTES} as b from pieces
     ), batches as (
       select b, json_agg(json_build_object('r', r, 'p', p, 's', encode(s, 'base64')) order by r, p)::text as data from numbered group by b
     )
     select data, md5(data) as md5 from batches order by b`,
  );
  let ord = 0;
  for (;;) {
    const { rows } = await client.query<{ data: string; md5: string }>(`fetch 1 from ${CURSOR}`);
    if (!rows[0]) break;
    await tx.insertInto('template_seed_batches').values({ snapshot_id: snapshotId, table_name: shape.name, ord, data: rows[0].data }).execute();
    onBatch(rows[0].md5);
    ord++;
  }
  await client.query(`close ${CURSOR}`);
  return ord;
}

/** The snapshot a template's publication pinned, or undefined when it is gone (the template app was deleted). */
export async function readSeedSnapshot(db: Kysely<ControlDatabase>, id: string): Promise<SeedSnapshot | undefined> {
  const row = await db.selectFrom('template_seed_snapshots').select(['id', 'tables', 'digest']).where('id', '=', id).executeTakeFirst();
  return row && { id: row.id, tables: row.tables as unknown as SnapshotTable[], digest: row.digest };
}

/** The lock between publishing (which drops snapshots no one needs) and a clone request (which pins one). */
const snapshotLock = (appId: string) => sql`hashtextextended(${'svc_template_seed:' + appId}, 0)`;

/**
 * Called in a clone request's transaction: the snapshot its source pinned still exists, and stays until the clone is
 * recorded (pruneSeedSnapshots waits for this transaction). Gone: the template was published again meanwhile.
 */
export async function holdSeedSnapshot(tx: Kysely<ControlDatabase>, appId: string, snapshotId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock_shared(${snapshotLock(appId)})`.execute(tx);
  const found = await tx.selectFrom('template_seed_snapshots').select('id').where('id', '=', snapshotId).executeTakeFirst();
  if (!found) throw templateErrors.republished();
}

/** Deletes the app's snapshots that neither its template nor an unfinished clone (in progress or failed) refers to. */
export async function pruneSeedSnapshots(tx: Kysely<ControlDatabase>, appId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(${snapshotLock(appId)})`.execute(tx);
  await sql`
    delete from template_seed_snapshots s
     where s.app_id = ${appId}
       and s.id is distinct from (select seed_snapshot_id from templates where app_id = ${appId})
       and not exists (select 1 from template_clones c
                        where c.template_app_id = ${appId} and c.status <> 'ready' and c.source->>'seed_snapshot_id' = s.id::text)`.execute(tx);
}

/**
 * Copies a snapshot's rows into the clone's database in one transaction (a retried step starts over): each table's
 * batches, one at a time, into a temporary table of pieces, then the rows rebuilt from their pieces and inserted with
 * their ids (on conflict skipped), into the columns both have; then each id sequence moves past the copied ids.
 */
export async function copySeedSnapshot(db: Kysely<ControlDatabase>, target: AppSql, snapshot: SeedSnapshot): Promise<void> {
  await target.transaction(async (client) => {
    await client.query('create temporary table svc_seed_pieces (r bigint, p integer, s bytea) on commit drop');
    for (const table of snapshot.tables) {
      for (let ord = 0; ord < table.batches; ord++) {
        const batch = await db
          .selectFrom('template_seed_batches')
          .select('data')
          .where('snapshot_id', '=', snapshot.id)
          .where('table_name', '=', table.name)
          .where('ord', '=', ord)
          .executeTakeFirst();
        if (!batch) throw templateErrors.seedSnapshotGone();
        await client.query(`insert into svc_seed_pieces select r, p, decode(s, 'base64') from json_to_recordset($1::json) as x(r bigint, p integer, s text)`, [batch.data]);
      }
      await insertRows(client, table);
      await client.query('truncate svc_seed_pieces');
    }
  });
}

async function insertRows(client: pg.ClientBase, table: SnapshotTable): Promise<void> {
  const target = `public.${q(table.name)}`;
  const columns = (
    await client.query<{ name: string; seq: string | null }>(
      `select attname as name, pg_get_serial_sequence($1, attname) as seq from pg_attribute
        where attrelid = $1::regclass and attnum > 0 and not attisdropped and attgenerated = '' order by attnum`,
      [target],
    )
  ).rows;
  // The template's schema may have moved on since it was published: the columns both have are copied.
  const shared = columns.filter((c) => table.columns.includes(c.name));
  if (!shared.length) return;
  const list = shared.map((c) => q(c.name)).join(', ');
  await client.query(
    `insert into ${target} (${list}) overriding system value
     select ${shared.map((c) => `x.${q(c.name)}`).join(', ')}
       from (select convert_from(string_agg(s, ''::bytea order by p), 'UTF8')::json as doc from svc_seed_pieces group by r order by r) d,
            lateral json_populate_record(null::${target}, d.doc) x
     on conflict do nothing`,
  );
  for (const c of columns.filter((col) => col.seq)) {
    await client.query(`select setval($1, greatest((select max(${q(c.name)}) from ${target}), 1))`, [c.seq]);
  }
}
