// The sandbox: what a deployed function must not be able to do, and limits that stop it without hurting others.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { createApp, deployFunction, fetchFunction, readText, type App } from '../helpers/functions.ts';

let p: TestPlatform;
let appA: App;
let appB: App;
const MASTER_KEY = 'ab'.repeat(32);

const PROBE = `
export default async (req: Request, ctx: any) => {
  const port = new URL(req.url).searchParams.get('port');
  const attempt = async (fn: () => unknown) => {
    try {
      const value = await fn();
      return { ok: true, value: String(value).slice(0, 300) };
    } catch (e: any) {
      return { ok: false, error: String(e?.name) + ': ' + String(e?.message).slice(0, 300) };
    }
  };
  const probes: Record<string, () => unknown> = {
    readPasswd: () => Deno.readTextFile('/etc/passwd'),
    readPasswdSync: () => Deno.readTextFileSync('/etc/passwd'),
    statRoot: () => Deno.statSync('/'),
    readDir: () => Array.from(Deno.readDirSync('/')).length,
    importPasswd: () => import('file:///etc/' + 'passwd'),
    importJson: () => import('file:///etc/' + 'os-release', { with: { type: 'json' } }),
    fetchFile: () => fetch('file:///etc/passwd').then((r) => r.text()),
    procEnviron: () => Deno.readTextFile('/proc/self/environ'),
    initEnviron: () => Deno.readTextFile('/proc/1/environ'),
    envDatabaseUrl: () => Deno.env.get('DATABASE_URL'),
    envMasterKey: () => Deno.env.get('SVC_MASTER_KEY'),
    envAll: () => JSON.stringify(Deno.env.toObject()),
    commandAbsolute: () => new Deno.Command('/bin/sh', { args: ['-c', 'id'] }).output(),
    commandBare: () => new Deno.Command('sh', { args: ['-c', 'id'] }).output(),
    postgresTcp: () => Deno.connect({ hostname: '127.0.0.1', port: 5432 }),
    postgresLocalhost: () => Deno.connect({ hostname: 'localhost', port: 5432 }),
    postgresLoopbackAlias: () => Deno.connect({ hostname: '127.0.0.2', port: 5432 }),
    postgresIpv6: () => Deno.connect({ hostname: '::1', port: 5432 }),
    postgresMapped: () => fetch('http://[::ffff:127.0.0.1]:5432/'),
    postgresFetch: () => fetch('http://127.0.0.1:5432/'),
    postgresUnix: () => Deno.connect({ transport: 'unix', path: '/var/run/postgresql/.s.PGSQL.5432' } as any),
    platformItself: () => fetch('http://127.0.0.1:' + port + '/health'),
    importFromLoopback: () => import('http://127.0.0.1:' + port + '/health'),
    metadata: () => fetch('http://169.254.169.254/latest/meta-data/'),
    privateNet: () => Deno.connect({ hostname: '10.0.0.1', port: 80 }),
    write: () => Deno.writeTextFile('/tmp/svc-function-escape', 'x'),
    ffi: () => Deno.dlopen('/lib/x86_64-linux-gnu/libc.so.6', {}),
    sys: () => Deno.hostname(),
    listen: () => Deno.listen({ port: 0 }),
    stdout: () => (Deno as any).stdout.write(new TextEncoder().encode('{"type":"end","id":1}\\n')),
  };
  const out: Record<string, unknown> = {};
  for (const [k, f] of Object.entries(probes)) out[k] = await attempt(f);
  return Response.json({ out, env: ctx.env });
};`;

async function deploy(app: typeof appA, body: Record<string, unknown>) {
  const r = await deployFunction(p, app.app_id, app.service_key.key, body);
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
  return r.body;
}

async function call(app: typeof appA, name: string, query = '') {
  const started = Date.now();
  const res = await fetchFunction(p, app.app_id, `${name}${query}`);
  return { status: res.status, ...(await readText(res)), ms: Date.now() - started };
}

beforeAll(async () => {
  // The platform's own secrets exist in its configuration; none may reach a function.
  p = await startTestPlatform({ SVC_MASTER_KEY: MASTER_KEY });
  appA = (await createApp(p, 'tenant a')).app;
  appB = (await createApp(p, 'tenant b')).app;
  await deploy(appA, { name: 'probe', code: PROBE, envVars: { SECRET_A: 'alpha-secret' } });
  await deploy(appB, { name: 'probe', code: PROBE, envVars: { SECRET_B: 'beta-secret' } });
  await deploy(appA, { name: 'healthy', code: 'export default () => new Response("still here");' });
  await deploy(appB, { name: 'healthy', code: 'export default () => new Response("still here");' });
});

afterAll(async () => {
  await p?.close();
});

describe('the sandbox', () => {
  let out: Record<string, { ok: boolean; error?: string; value?: string }>;
  let env: Record<string, string>;

  beforeAll(async () => {
    const r = await call(appA, 'probe', `?port=${new URL(p.url).port}`);
    expect(r.status, r.text).toBe(200);
    out = r.json.out;
    env = r.json.env;
  });

  it('cannot read a host file (/etc/passwd), by API, import or fetch', () => {
    for (const probe of ['readPasswd', 'readPasswdSync', 'statRoot', 'readDir', 'importPasswd', 'importJson', 'fetchFile', 'procEnviron', 'initEnviron']) {
      expect(out[probe], probe).toMatchObject({ ok: false });
      expect(out[probe]!.error, probe).toMatch(/NotCapable|Requires read access/);
    }
  });

  it("cannot read the platform's environment (DATABASE_URL, SVC_MASTER_KEY), and ctx.env lacks them", () => {
    for (const probe of ['envDatabaseUrl', 'envMasterKey', 'envAll']) {
      expect(out[probe], probe).toMatchObject({ ok: false });
      expect(out[probe]!.error, probe).toMatch(/NotCapable/);
    }
    expect(Object.keys(env).sort()).toEqual(['SECRET_A', 'SVC_API_URL', 'SVC_APP_ID']);
    expect(JSON.stringify(env)).not.toContain(MASTER_KEY);
    expect(JSON.stringify(env)).not.toContain('postgres://');
  });

  it('runs with an empty environment (checked from the host side)', () => {
    const pids = p.services.functions.pool.pids(functionId(appA, 'probe'));
    expect(pids.length).toBeGreaterThan(0);
    for (const pid of pids) {
      const names = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean).map((kv) => kv.split('=')[0]).sort();
      expect(names).toEqual(['DENO_DIR', 'NO_COLOR']);
    }
  });

  it('cannot start a process', () => {
    expect(out.commandAbsolute).toMatchObject({ ok: false });
    expect(out.commandAbsolute!.error).toMatch(/NotCapable: Requires run access/);
    expect(out.commandBare).toMatchObject({ ok: false });
  });

  it('cannot connect to Postgres on 127.0.0.1:5432 (by any loopback name or its unix socket), the platform, or cloud metadata', () => {
    for (const probe of ['postgresTcp', 'postgresLocalhost', 'postgresLoopbackAlias', 'postgresIpv6', 'postgresMapped', 'postgresFetch', 'platformItself', 'metadata', 'privateNet']) {
      expect(out[probe], probe).toMatchObject({ ok: false });
      // Deno's denial, explained with the platform's settings instead of a Deno flag a function cannot set.
      expect(out[probe]!.error, probe).toMatch(/NotCapable: Network access to "[^"]+" is denied: /);
      expect(out[probe]!.error, probe).not.toContain('--allow-net');
    }
    expect(out.postgresUnix).toMatchObject({ ok: false });
    expect(out.postgresUnix!.error).toMatch(/NotCapable|Requires/);
    expect(out.importFromLoopback).toMatchObject({ ok: false });
    expect(out.importFromLoopback!.error).toMatch(/Requires import access/);
  });

  it('cannot write files, load native code, read system information, listen, or reach the runtime channel', () => {
    for (const probe of ['write', 'ffi', 'sys', 'listen', 'stdout']) expect(out[probe], probe).toMatchObject({ ok: false });
  });

  it("cannot see another app's variables; each app's function runs in its own processes", async () => {
    const b = await call(appB, 'probe', `?port=${new URL(p.url).port}`);
    expect(Object.keys(b.json.env).sort()).toEqual(['SECRET_B', 'SVC_API_URL', 'SVC_APP_ID']);
    expect(b.json.env.SVC_APP_ID).toBe(appB.app_id);
    expect(JSON.stringify(b.json)).not.toContain('alpha-secret');
    expect(JSON.stringify(env)).not.toContain('beta-secret');
    const pidsA = p.services.functions.pool.pids(functionId(appA, 'probe'));
    const pidsB = p.services.functions.pool.pids(functionId(appB, 'probe'));
    expect(pidsA.filter((pid) => pidsB.includes(pid))).toEqual([]);
  });
});

describe('limits', () => {
  it('stops an endless loop at its timeout (504 FUNCTION_TIMEOUT) while other functions keep answering', async () => {
    await deploy(appA, { name: 'spin', code: 'export default () => { while (true) {} };', timeoutMs: 1500 });
    const spinning = call(appA, 'spin');
    await new Promise((r) => setTimeout(r, 200));
    // During the loop: the platform, this app's other function and another app's function answer promptly.
    for (let i = 0; i < 5; i++) {
      const other = await call(appB, 'healthy');
      expect(other.status).toBe(200);
      expect(other.ms).toBeLessThan(1000);
      expect((await call(appA, 'healthy')).text).toBe('still here');
    }
    expect((await fetch(`${p.url}/health`)).status).toBe(200);
    const r = await spinning;
    expect(r.status).toBe(504);
    expect(r.json.error.code).toBe('FUNCTION_TIMEOUT');
    expect(r.ms).toBeGreaterThanOrEqual(1400);
    expect(r.ms).toBeLessThan(5000);
    // A fresh process serves the next call (and is stopped again).
    expect((await call(appA, 'spin')).status).toBe(504);
    const logs = await p.api('GET', `/v1/${appA.app_id}/functions/spin/logs`, { key: appA.service_key.key });
    expect(logs.body.logs[0]).toMatchObject({ status_code: 504, level: 'error' });
    expect(logs.body.logs[0].error).toMatch(/timed out/);
  });

  it('a Response claiming a status outside 200-599 is a function error (500 FUNCTION_ERROR), and the platform serves on', async () => {
    for (const status of [5, 102, 1000]) {
      await deploy(appA, { name: 'oddstatus', code: `class Odd extends Response { get status() { return ${status}; } }\nexport default () => new Odd('x');` });
      const r = await call(appA, 'oddstatus');
      expect([r.status, r.json.error.code], String(status)).toEqual([500, 'FUNCTION_ERROR']);
      const logs = await p.api('GET', `/v1/${appA.app_id}/functions/oddstatus/logs`, { key: appA.service_key.key });
      expect(logs.body.logs[0].error).toContain(`status ${status}`);
    }
    expect((await call(appA, 'healthy')).text).toBe('still here');
    expect((await fetch(`${p.url}/health`)).status).toBe(200);
  });

  it('stops a heap hog at its memory limit (500 FUNCTION_OUT_OF_MEMORY) while other functions keep answering', async () => {
    await deploy(appA, {
      name: 'heaphog',
      memoryLimitMb: 64,
      code: 'export default async () => { const keep: string[] = []; for (let i = 0; ; i++) { keep.push("x".repeat(10000) + i); if (i % 2000 === 0) await new Promise((r) => setTimeout(r, 0)); } };',
    });
    const hog = call(appA, 'heaphog');
    for (let i = 0; i < 3; i++) expect((await call(appB, 'healthy')).status).toBe(200);
    const r = await hog;
    expect(r.status).toBe(500);
    expect(r.json.error.code).toBe('FUNCTION_OUT_OF_MEMORY');
    expect((await call(appA, 'healthy')).text).toBe('still here');
    const logs = await p.api('GET', `/v1/${appA.app_id}/functions/heaphog/logs`, { key: appA.service_key.key });
    expect(logs.body.logs[0]).toMatchObject({ status_code: 500, level: 'error' });
    expect(logs.body.logs[0].error).toMatch(/out of memory/);
  });

  it('stops memory outside the V8 heap (ArrayBuffers) too', async () => {
    await deploy(appA, {
      name: 'bufferhog',
      memoryLimitMb: 64,
      timeoutMs: 20000,
      code: 'export default async () => { const keep: Uint8Array[] = []; for (;;) { const b = new Uint8Array(16 * 1024 * 1024); b.fill(1); keep.push(b); await new Promise((r) => setTimeout(r, 5)); } };',
    });
    const hog = call(appA, 'bufferhog');
    expect((await call(appB, 'healthy')).status).toBe(200);
    const r = await hog;
    expect(r.status).toBe(500);
    expect(r.json.error.code).toBe('FUNCTION_OUT_OF_MEMORY');
    expect(r.ms).toBeLessThan(10000);
    const logs = await p.api('GET', `/v1/${appA.app_id}/functions/bufferhog/logs`, { key: appA.service_key.key });
    expect(logs.body.logs[0].memory_mb).toBeGreaterThanOrEqual(64);
  });
});

let ids: Map<string, string> | undefined;
function functionId(app: typeof appA, name: string): string {
  const id = ids?.get(`${app.app_id}/${name}`);
  if (!id) throw new Error(`no id for ${name}`);
  return id;
}

beforeAll(async () => {
  const rows = await p.sql('select id, app_id, name from functions');
  ids = new Map(rows.map((r) => [`${r.app_id}/${r.name}`, r.id]));
});
