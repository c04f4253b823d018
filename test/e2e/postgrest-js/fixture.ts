// Shared fixture of the PostgREST parity suite (issue 17): a server started as `npm start` does, one app whose
// schema mirrors the one postgrest-js's own test suite runs against (its test/db/00-schema.sql, MIT-licensed),
// loaded with that suite's dummy data through our data API, and the clients pointed at it.
//
// The suite ran its files one after another in a single database, in alphabetical order, so the expectations
// of every file after basic.test.ts were taken in the state basic.test.ts left behind: its upsert of 'dragarcia'
// rewrote that row (an UPDATE writes a new row version, so an unordered read returns it last) and it deleted
// message 3 (its writes of messages 3, 5-10 end in deletes). `state: 'after-basic'` replays exactly those two
// changes through the data API; `state: 'fresh'` is the dummy data as loaded (for basic.test.ts itself, whose
// cases run in upstream order and build on each other).
//
// Not a test file (vitest collects only *.test.ts).
import { PostgrestClient } from '@supabase/postgrest-js';
import pg from 'pg';
import { databaseUrl } from '../../helpers/db.ts';
import { spawnServer, type SpawnedServer } from '../../helpers/server.ts';
import { request } from '../e2e-helpers.ts';

/** The mirrored schema, in schema_apply's definition format. Column order is the upstream one (CSV output shows it). */
export const SCHEMA = {
  tables: {
    users: {
      columns: {
        username: { type: 'text', primary: true },
        data: { type: 'jsonb' },
        age_range: { type: 'int4range' },
        // Upstream: an enum type user_status; here a text column with an enum list (a CHECK), default 'ONLINE'.
        status: { type: 'text', enum: ['ONLINE', 'OFFLINE'], default: "'ONLINE'" },
        catchphrase: { type: 'tsvector' },
      },
      access: 'service',
    },
    user_profiles: {
      columns: {
        id: { type: 'bigint', primary: true, identity: true },
        username: { type: 'text', references: { table: 'users', column: 'username' } },
      },
      access: 'service',
    },
    best_friends: {
      columns: {
        id: { type: 'bigint', primary: true, identity: true },
        first_user: { type: 'text', nullable: false, references: { table: 'users', column: 'username' } },
        second_user: { type: 'text', nullable: false, references: { table: 'users', column: 'username' } },
        third_wheel: { type: 'text', references: { table: 'users', column: 'username' } },
      },
      access: 'service',
    },
    channels: {
      columns: {
        id: { type: 'bigint', primary: true, identity: true },
        data: { type: 'jsonb' },
        slug: { type: 'text' },
      },
      access: 'service',
    },
    channel_details: {
      columns: {
        id: { type: 'bigint', primary: true, references: { table: 'channels', column: 'id' } },
        details: { type: 'text' },
      },
      access: 'service',
    },
    messages: {
      columns: {
        id: { type: 'bigint', primary: true, identity: true },
        data: { type: 'jsonb' },
        message: { type: 'text' },
        username: { type: 'text', nullable: false, references: { table: 'users', column: 'username' } },
        channel_id: { type: 'bigint', nullable: false, references: { table: 'channels', column: 'id' } },
      },
      access: 'service',
    },
    collections: {
      columns: {
        id: { type: 'bigint', primary: true, identity: true },
        description: { type: 'text' },
        parent_id: { type: 'bigint', references: { table: 'collections', column: 'id' } },
      },
      access: 'service',
    },
    // A table referencing itself twice (upstream's supabase/migrations schema, after the 00-schema.sql one above).
    lab: {
      columns: {
        id: { type: 'bigint', primary: true, identity: true },
        name: { type: 'text' },
        type: { type: 'text' },
        parent: { type: 'bigint', references: { table: 'lab', column: 'id', onDelete: 'cascade' } },
        main: { type: 'bigint', references: { table: 'lab', column: 'id', onDelete: 'cascade' } },
      },
      access: 'service',
    },
    products: {
      columns: {
        id: { type: 'bigint', primary: true, identity: true },
        name: { type: 'text', nullable: false },
        description: { type: 'text' },
        price: { type: 'numeric(10,2)', nullable: false },
      },
      access: 'service',
    },
    categories: {
      columns: {
        id: { type: 'bigint', primary: true, identity: true },
        name: { type: 'text', nullable: false },
        description: { type: 'text' },
      },
      access: 'service',
    },
    product_categories: {
      columns: {
        product_id: { type: 'bigint', primary: true, references: { table: 'products', column: 'id', onDelete: 'cascade' } },
        category_id: { type: 'bigint', primary: true, references: { table: 'categories', column: 'id', onDelete: 'cascade' } },
      },
      access: 'service',
    },
    // Upstream also has a column named "column whitespace"; our identifiers are [a-z0-9_], so it is left out.
    cornercase: {
      columns: {
        id: { type: 'integer', primary: true },
        array_column: { type: 'text[]' },
      },
      access: 'service',
    },
    hotel: {
      columns: {
        id: { type: 'bigint', primary: true, identity: true },
        name: { type: 'text' },
      },
      access: 'service',
    },
    booking: {
      columns: {
        id: { type: 'bigint', primary: true, identity: true },
        hotel_id: { type: 'bigint', references: { table: 'hotel', column: 'id' } },
      },
      access: 'service',
    },
  },
};

/** Upstream's 01-dummy-data.sql, table by table in insertion order (rows without ids take them from the identity). */
export const DUMMY_DATA: ReadonlyArray<[table: string, rows: Record<string, unknown>[]]> = [
  [
    'users',
    [
      { username: 'supabot', status: 'ONLINE', age_range: '[1,2)', catchphrase: 'fat cat', data: null },
      { username: 'kiwicopple', status: 'OFFLINE', age_range: '[25,35)', catchphrase: 'cat bat', data: null },
      { username: 'awailas', status: 'ONLINE', age_range: '[25,35)', catchphrase: 'bat rat', data: null },
      { username: 'dragarcia', status: 'ONLINE', age_range: '[20,30)', catchphrase: 'rat fat', data: null },
      {
        username: 'jsonuser',
        status: 'ONLINE',
        age_range: '[20,30)',
        catchphrase: 'json test',
        data: { foo: { bar: { nested: 'value' }, baz: 'string value' } },
      },
    ],
  ],
  ['channels', [{ slug: 'public' }, { slug: 'random' }, { slug: 'other' }]],
  [
    'messages',
    [
      { message: 'Hello World 👋', channel_id: 1, username: 'supabot' },
      {
        message: 'Perfection is attained, not when there is nothing more to add, but when there is nothing left to take away.',
        channel_id: 2,
        username: 'supabot',
      },
      { message: 'Some message on channel wihtout details', channel_id: 3, username: 'supabot' },
      { message: 'Some message on channel wihtout details', channel_id: 3, username: 'supabot' },
    ],
  ],
  [
    'channel_details',
    [
      { id: 1, details: 'Details for public channel' },
      { id: 2, details: 'Details for random channel' },
    ],
  ],
  [
    'user_profiles',
    [
      { id: 1, username: 'supabot' },
      { id: 2, username: null },
    ],
  ],
  [
    'best_friends',
    [
      { id: 1, first_user: 'supabot', second_user: 'kiwicopple', third_wheel: 'awailas' },
      { id: 2, first_user: 'supabot', second_user: 'awailas', third_wheel: null },
    ],
  ],
  [
    'collections',
    [
      { id: 1, description: 'Root Collection', parent_id: null },
      { id: 2, description: 'Child of Root', parent_id: 1 },
      { id: 3, description: 'Another Child of Root', parent_id: 1 },
      { id: 4, description: 'Grandchild', parent_id: 2 },
      { id: 5, description: 'Sibling of Grandchild', parent_id: 2 },
      { id: 6, description: 'Child of Another Root', parent_id: 3 },
    ],
  ],
  [
    'lab',
    [
      { id: 1, name: 'Main Board', type: 'board', parent: null, main: null },
      { id: 2, name: 'First Task', type: 'task', parent: 1, main: null },
    ],
  ],
  [
    'products',
    [
      { id: 1, name: 'Laptop', description: 'High-performance laptop', price: 999.99 },
      { id: 2, name: 'Smartphone', description: 'Latest model smartphone', price: 699.99 },
      { id: 3, name: 'Headphones', description: 'Noise-cancelling headphones', price: 199.99 },
    ],
  ],
  [
    'categories',
    [
      { id: 1, name: 'Electronics', description: 'Electronic devices and gadgets' },
      { id: 2, name: 'Computers', description: 'Computer and computer accessories' },
      { id: 3, name: 'Audio', description: 'Audio equipment' },
    ],
  ],
  [
    'product_categories',
    [
      { product_id: 1, category_id: 1 },
      { product_id: 1, category_id: 2 },
      { product_id: 2, category_id: 1 },
      { product_id: 3, category_id: 1 },
      { product_id: 3, category_id: 3 },
    ],
  ],
  [
    'cornercase',
    [
      { id: 1, array_column: ['test', 'one'] },
      { id: 2, array_column: ['another'] },
      { id: 3, array_column: ['test2'] },
    ],
  ],
  [
    'hotel',
    [
      { id: 1, name: 'Sunset Resort' },
      { id: 2, name: 'Mountain View Hotel' },
      { id: 3, name: 'Beachfront Inn' },
      { id: 4, name: null },
    ],
  ],
  [
    'booking',
    [
      { id: 1, hotel_id: 1 },
      { id: 2, hotel_id: 1 },
      { id: 3, hotel_id: 2 },
      { id: 4, hotel_id: null },
      { id: 5, hotel_id: 3 },
      { id: 6, hotel_id: 1 },
      { id: 7, hotel_id: null },
      { id: 8, hotel_id: 4 },
    ],
  ],
];

export interface Fixture {
  server: SpawnedServer;
  appId: string;
  serviceKey: string;
  /** The PostgREST base URL of the app: `${server.url}/v1/${appId}`. */
  restUrl: string;
  /** The service key as `Authorization: Bearer` and `apikey`. */
  headers: Record<string, string>;
  /** postgrest-js with those headers. */
  postgrest: PostgrestClient;
  close(): Promise<void>;
}

export type FixtureState = 'fresh' | 'after-basic';

async function must(what: string, res: Awaited<ReturnType<typeof request>>, ...ok: number[]): Promise<void> {
  if (!ok.includes(res.status)) throw new Error(`fixture: ${what} answered ${res.status}: ${res.text.slice(0, 2000)}`);
}

/** Starts the server, creates the app, applies SCHEMA, loads DUMMY_DATA and brings it to `state`. */
export async function setupFixture(state: FixtureState): Promise<Fixture> {
  const server = await spawnServer();
  try {
    const init = await request(server.url, '/init', { method: 'POST', key: server.platformKey, body: { name: 'PostgREST parity' } });
    await must('POST /init', init, 201);
    const appId: string = init.json.app_id;
    const serviceKey: string = init.json.service_key.key;
    const apply = await request(server.url, `/v1/${appId}/schema/apply`, {
      method: 'POST',
      key: serviceKey,
      body: { schema: SCHEMA, name: 'postgrest-js suite schema' },
    });
    await must('schema_apply of the mirrored schema (identity, enum, int4range, tsvector)', apply, 200);
    for (const [table, rows] of DUMMY_DATA) {
      const res = await request(server.url, `/v1/${appId}/${table}`, {
        method: 'POST',
        key: serviceKey,
        headers: { prefer: 'return=minimal' },
        body: rows,
      });
      await must(`bulk POST of the dummy ${table}`, res, 201);
    }
    if (state === 'after-basic') {
      const touch = await request(server.url, `/v1/${appId}/users?username=eq.dragarcia`, {
        method: 'PATCH',
        key: serviceKey,
        headers: { prefer: 'return=minimal' },
        body: { status: 'ONLINE' },
      });
      await must("PATCH of users 'dragarcia' (basic.test.ts's upsert)", touch, 204);
      const del = await request(server.url, `/v1/${appId}/messages?id=eq.3`, { method: 'DELETE', key: serviceKey, headers: { prefer: 'return=minimal' } });
      await must('DELETE of message 3 (basic.test.ts net effect)', del, 204);
    }
    const restUrl = `${server.url}/v1/${appId}`;
    const headers = { Authorization: `Bearer ${serviceKey}`, apikey: serviceKey };
    const postgrest = new PostgrestClient(restUrl, { headers });
    return { server, appId, serviceKey, restUrl, headers, postgrest, close: () => server.close() };
  } catch (err) {
    await server.close();
    throw err;
  }
}

// ---------------------------------------------------------------- expectations

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  204: 'No Content',
  206: 'Partial Content',
  300: 'Multiple Choices',
  400: 'Bad Request',
  404: 'Not Found',
  406: 'Not Acceptable',
  409: 'Conflict',
};

export interface PostgrestErrorFields {
  code: unknown;
  details: unknown;
  hint: unknown;
  message: unknown;
}

export interface Outcome {
  count: number | null;
  data: unknown;
  error: PostgrestErrorFields | null;
  status: number;
  statusText: string;
}

/**
 * What the upstream inline snapshots show of a response: count, data, status, statusText, and of an error the four
 * PostgREST fields (our body also carries our own `error` envelope beside them, deliberately; it is not compared).
 */
export function outcome(res: { count: number | null; data: unknown; error: unknown; status: number; statusText: string }): Outcome {
  const e = res.error as Record<string, unknown> | null;
  return {
    count: res.count,
    data: res.data,
    error: e === null ? null : { code: e.code, details: e.details, hint: e.hint, message: e.message },
    status: res.status,
    statusText: res.statusText,
  };
}

/** A successful outcome. */
export function ok(data: unknown, opts: { status?: number; count?: unknown } = {}): Outcome {
  const status = opts.status ?? 200;
  return { count: (opts.count ?? null) as number | null, data, error: null, status, statusText: STATUS_TEXT[status]! };
}

/** A failed outcome (data and count null). */
export function failed(status: number, error: PostgrestErrorFields): Outcome {
  return { count: null, data: null, error, status, statusText: STATUS_TEXT[status]! };
}

/** PostgREST's PGRST116 message (also the one postgrest-js itself uses for maybeSingle). */
export const NOT_ONE_ROW = 'JSON object requested, multiple (or no) rows returned';

// Rows of the dummy data as PostgREST renders them (tsvector and int4range as Postgres prints them).
export const USERS = {
  supabot: { age_range: '[1,2)', catchphrase: "'cat' 'fat'", data: null, status: 'ONLINE', username: 'supabot' },
  kiwicopple: { age_range: '[25,35)', catchphrase: "'bat' 'cat'", data: null, status: 'OFFLINE', username: 'kiwicopple' },
  awailas: { age_range: '[25,35)', catchphrase: "'bat' 'rat'", data: null, status: 'ONLINE', username: 'awailas' },
  dragarcia: { age_range: '[20,30)', catchphrase: "'fat' 'rat'", data: null, status: 'ONLINE', username: 'dragarcia' },
  jsonuser: {
    age_range: '[20,30)',
    catchphrase: "'json' 'test'",
    data: { foo: { bar: { nested: 'value' }, baz: 'string value' } },
    status: 'ONLINE',
    username: 'jsonuser',
  },
} as const;

/** Unordered reads of users after basic.test.ts (dragarcia last). */
export const USERS_AFTER_BASIC = [USERS.supabot, USERS.kiwicopple, USERS.awailas, USERS.jsonuser, USERS.dragarcia];

export const MESSAGES = {
  1: { channel_id: 1, data: null, id: 1, message: 'Hello World 👋', username: 'supabot' },
  2: {
    channel_id: 2,
    data: null,
    id: 2,
    message: 'Perfection is attained, not when there is nothing more to add, but when there is nothing left to take away.',
    username: 'supabot',
  },
  3: { channel_id: 3, data: null, id: 3, message: 'Some message on channel wihtout details', username: 'supabot' },
  4: { channel_id: 3, data: null, id: 4, message: 'Some message on channel wihtout details', username: 'supabot' },
} as const;

/** A `foo` message as basic.test.ts writes them. */
export const foo = (id: number, channel_id: number) => ({ channel_id, data: null, id, message: 'foo', username: 'supabot' });

// ---------------------------------------------------------------- declared functions (rpc.test.ts)

/** One declared function: its SQL (created as the app database's owner) and its svc_meta.functions row. */
export interface FixtureFunction {
  name: string;
  sql: string;
  args: { name: string; type: string; default: string | null }[];
  returns: { kind: 'scalar' | 'row' | 'set' | 'table' | 'void'; type?: string; table?: string; columns?: Record<string, string> };
  volatility: 'stable' | 'volatile';
  access: 'public' | 'authenticated' | 'service';
}

const ROLES_OF = { public: 'svc_anon, svc_user, svc_service', authenticated: 'svc_user, svc_service', service: 'svc_service' } as const;

/**
 * Creates `functions` in the app's database as schema_apply will (public.<name>, SECURITY INVOKER, EXECUTE for the
 * roles of `access` only) and records each in svc_meta.functions, the contract the data API's /rpc serves from
 * (app migration 12). Until schema_apply declares functions, tests create them this way.
 */
export async function declareFunctions(server: SpawnedServer, appId: string, functions: readonly FixtureFunction[]): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl(server.appDbPrefix + appId) });
  await client.connect();
  try {
    for (const f of functions) {
      await client.query(f.sql);
      const signature = `public.${f.name}(${f.args.map((a) => a.type).join(', ')})`;
      await client.query(`revoke all on function ${signature} from public; grant execute on function ${signature} to ${ROLES_OF[f.access]}`);
      await client.query(
        `insert into svc_meta.functions (name, declaration, args, returns, volatility, access, checksum) values ($1, '{}', $2, $3, $4, $5, 'test')`,
        [f.name, JSON.stringify(f.args), JSON.stringify(f.returns), f.volatility, f.access],
      );
    }
  } finally {
    await client.end();
  }
}
