// Announcements that an app's definition changed (its schema, its functions), or that long-running work moved on (a
// clone, a deployment: the URI of its resource), heard by every api process: the MCP transport tells the sessions
// subscribed to those resources. Schema applies announce themselves (the schema lives in the app's own database);
// function definitions and work are announced by triggers on their tables (migration 0040), so every path that
// writes one is covered.
import { sql, type Kysely } from 'kysely';
import type { PgNotices } from '../db/notices.ts';
import type { ControlDatabase } from '../db/types.ts';

/** The channel of apps' definitions; its payload is the app's id. */
const CHANNEL = 'svc_app_changes';
/** The channel of work's resources; its payload is the resource's URI. */
const RESOURCE_CHANNEL = 'svc_resource_changes';

export class AppChanges {
  readonly #db: Kysely<ControlDatabase>;
  readonly #notices: PgNotices;

  constructor(db: Kysely<ControlDatabase>, notices: PgNotices) {
    this.#db = db;
    this.#notices = notices;
  }

  async announce(appId: string): Promise<void> {
    await sql`select pg_notify(${CHANNEL}, ${appId})`.execute(this.#db);
  }

  /**
   * Calls `app` with the app's id whenever one changed, and `resource` with a work resource's URI whenever it moved on,
   * on any process, until the returned function is called.
   */
  subscribe(app: (appId: string) => void, resource: (uri: string) => void): () => void {
    const apps = this.#notices.subscribe(CHANNEL, { notice: app, lost: () => undefined });
    const work = this.#notices.subscribe(RESOURCE_CHANNEL, { notice: resource, lost: () => undefined });
    return () => {
      apps();
      work();
    };
  }
}
