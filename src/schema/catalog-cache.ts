import type { AppDatabases } from '../apps/app-databases.ts';
import { readCatalog, type Catalog } from './catalog.ts';

const MAX_APPS = 500;
/** A miss (unknown table or column) re-reads the catalog at most this often, so garbage names cannot hammer it. */
const MIN_REFRESH_MS = 1000;

interface Entry {
  catalog: Promise<Catalog>;
  readAt: number;
}

/**
 * Per-app catalog snapshots for the data API. Schema apply in this process invalidates at once; another
 * instance's apply is picked up when a request names a table or column the snapshot does not know.
 */
export class CatalogCache {
  readonly #databases: AppDatabases;
  readonly #entries = new Map<string, Entry>();

  constructor(databases: AppDatabases) {
    this.#databases = databases;
  }

  get(appId: string): Promise<Catalog> {
    const hit = this.#entries.get(appId);
    if (hit) return hit.catalog;
    return this.#load(appId);
  }

  /** Re-reads after a miss unless the snapshot is fresh; returns the (possibly same) snapshot. */
  refresh(appId: string): Promise<Catalog> {
    const hit = this.#entries.get(appId);
    if (hit && Date.now() - hit.readAt < MIN_REFRESH_MS) return hit.catalog;
    return this.#load(appId);
  }

  invalidate(appId: string): void {
    this.#entries.delete(appId);
  }

  #load(appId: string): Promise<Catalog> {
    const catalog = readCatalog(this.#databases.sql(appId));
    catalog.catch(() => this.#entries.delete(appId));
    if (this.#entries.size >= MAX_APPS) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(appId, { catalog, readAt: Date.now() });
    return catalog;
  }
}
