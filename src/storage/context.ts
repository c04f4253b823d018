// What the parts of the storage service share, handed to each through its constructor by StorageService.
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { ControlDatabase } from '../db/types.ts';
import type { UrlSigner } from './signing.ts';
import type { StorageBackend } from './types.ts';

export interface StorageContext {
  db: Kysely<ControlDatabase>;
  config: Config;
  /** Already the storage area's child logger. */
  log: Logger;
  signer: UrlSigner;
  backend: StorageBackend;
}
