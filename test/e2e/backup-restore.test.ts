// docs/operations.md's backup and restore run as written (issue 45): a platform with an app holding a row, a stored
// file and an end user is stopped and backed up by the page's blocks; its databases and data directory are dropped;
// the page's restore blocks bring them back, and a platform started on them serves the row, the file and the end
// user's sign-in (whose signing key is sealed with the master key of the restored data directory). The blocks are
// pointed, through the variables the page names, at this test's own control database, app database prefix and
// folders only.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/core/crypto.ts';
import { cloneControlDatabase, databaseUrl, databasesWithPrefix, dropDatabase, uniqueSuffix } from '../helpers/db.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { request } from './e2e-helpers.ts';
import { docsPage, runBash, shellBlocksUnder, type GuideRun } from './guide-runner.ts';

const page = readFileSync(docsPage('operations.md'), 'utf8');
const settings = shellBlocksUnder(page, 'The settings the commands read');
const backUp = shellBlocksUnder(page, 'Back up');
const restore = shellBlocksUnder(page, 'Restore');

const work = mkdtempSync(path.join(tmpdir(), 'svc-backup-'));
const dataDir = path.join(work, 'data');
const backupDir = path.join(work, 'backup');
const prefix = `svc_t${uniqueSuffix()}_`;
const platformKey = generateKey('svc_pk_');
const serverEnv = { SVC_DATA_DIR: dataDir, SVC_APP_DB_PREFIX: prefix, SVC_PLATFORM_API_KEY: platformKey };
let controlDb: string;
let server: SpawnedServer | undefined;

/** The page's settings block, then `blocks`, in one bash, with the variables naming this test's databases and folders. */
function run(blocks: string[]): Promise<GuideRun> {
  const script = ['set -euo pipefail', ...settings, ...blocks].join('\n');
  return runBash(script, work, {
    DATABASE_URL: databaseUrl(controlDb),
    SVC_APP_DATABASE_URL: '',
    SVC_DEFAULT_REGION: 'local',
    SVC_REGIONS: '',
    SVC_APP_DB_PREFIX: prefix,
    SVC_DATA_DIR: dataDir,
    BACKUP_DIR: backupDir,
  });
}

beforeAll(async () => {
  controlDb = await cloneControlDatabase();
  server = await spawnServer(serverEnv, { controlDb });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await dropDatabase(controlDb);
  rmSync(work, { recursive: true, force: true });
});

describe('docs/operations.md: Backups and restore', () => {
  it('the page has one settings block, one backup block and one restore block', () => {
    expect([settings.length, backUp.length, restore.length]).toEqual([1, 1, 1]);
  });

  it('backs up a stopped platform, and a platform started on the restored databases and data directory serves the row, the file and the end user', async () => {
    const made = await request(server!.url, '/init', { method: 'POST', key: platformKey, body: { name: 'Backed up' } });
    expect(made.status).toBe(201);
    const app: string = made.json.app_id;
    const sk: string = made.json.service_key.key;
    const schema = {
      tables: { notes: { columns: { id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' }, title: { type: 'text', nullable: false } } } },
    };
    expect((await request(server!.url, `/v1/${app}/schema/apply`, { method: 'POST', key: sk, body: { schema } })).status).toBe(200);
    const row = await request(server!.url, `/v1/${app}/notes`, { method: 'POST', key: sk, headers: { prefer: 'return=representation' }, body: { title: 'kept' } });
    expect(row.status).toBe(201);
    const bytes = Buffer.from('the bytes of a stored file\n');
    const upload = await request(server!.url, `/storage/${app}/upload`, {
      method: 'POST',
      key: sk,
      body: { filename: 'kept.txt', contentType: 'text/plain', sizeBytes: bytes.length },
    });
    expect(upload.status).toBe(200);
    const put = await fetch(upload.json.uploadUrl, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: bytes });
    expect(put.status).toBe(200);
    const user = { email: 'kept@example.com', password: 'correct horse battery' };
    expect((await request(server!.url, `/v1/${app}/auth/signup`, { method: 'POST', body: user })).status).toBe(201);

    expect(await server!.stop()).toBe(0);
    const backedUp = await run(backUp);
    expect(backedUp.status, `${backedUp.stdout}\n${backedUp.stderr}`).toBe(0);
    expect(readdirSync(backupDir, { recursive: true }).map(String).sort()).toEqual(['apps', 'apps/local', `apps/local/${prefix}${app}.dump`, 'control.dump', 'data.tar.gz']);

    // Everything the platform held is gone: its app databases (close() drops the prefix's), its control database, its data directory.
    await server!.close();
    server = undefined;
    await dropDatabase(controlDb);
    rmSync(dataDir, { recursive: true, force: true });
    expect(await databasesWithPrefix(prefix)).toEqual([]);
    expect(await databasesWithPrefix(controlDb)).toEqual([]);

    const restored = await run(restore);
    expect(restored.status, `${restored.stdout}\n${restored.stderr}`).toBe(0);
    expect(await databasesWithPrefix(prefix)).toEqual([`${prefix}${app}`]);

    server = await spawnServer(serverEnv, { controlDb });
    const rows = await request(server.url, `/v1/${app}/notes?select=id,title`, { key: sk });
    expect(rows.status).toBe(200);
    expect(rows.json).toEqual([{ id: row.json[0].id, title: 'kept' }]);
    const download = await request(server.url, `/storage/${app}/download/${upload.json.objectId}`, { key: sk });
    expect(download.status).toBe(200);
    const got = await fetch(download.json.downloadUrl);
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer())).toEqual(bytes);
    const login = await request(server.url, `/v1/${app}/auth/login`, { method: 'POST', body: user });
    expect(login.status).toBe(200);
    expect(login.json).toMatchObject({ token_type: 'bearer', user: { email: user.email } });
  }, 120_000);
});
