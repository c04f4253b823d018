import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Logger } from 'pino';
import { parseMasterKey } from './crypto.ts';

/** SVC_MASTER_KEY, or a key generated once into the data dir (with a warning: back it up or set the variable). */
export function loadMasterKey(configured: string | undefined, dataDir: string, log: Logger): Buffer {
  if (configured) return parseMasterKey(configured);
  const file = path.join(dataDir, 'master.key');
  if (existsSync(file)) return parseMasterKey(readFileSync(file, 'utf8'));
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  try {
    writeFileSync(file, key.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // Another process created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return parseMasterKey(readFileSync(file, 'utf8'));
    throw err;
  }
  log.warn({ file }, 'SVC_MASTER_KEY is not set: generated a master key into the data dir; back it up or set SVC_MASTER_KEY');
  return key;
}
