// Who may read (join) and write (broadcast, track presence) a private channel: the app's declared rules (the schema
// definition's `channels`, src/schema/channels.ts), judged for one role at a join, at a new token, and per HTTP message.
// Public channels are open to every holder of the app's publishable key and never come here.
import pg from 'pg';
import type { Logger } from 'pino';
import type { AppDatabases } from '../apps/app-databases.ts';
import { matchChannel, readChannelRules } from '../schema/channels.ts';
import type { ChannelRole } from './roles.ts';

export interface ChannelRights {
  read: boolean;
  write: boolean;
}

const ALL: ChannelRights = { read: true, write: true };
const NONE: ChannelRights = { read: false, write: false };

export class PrivateChannels {
  readonly #databases: AppDatabases;
  readonly #log: Logger;

  constructor(databases: AppDatabases, log: Logger) {
    this.#databases = databases;
    this.#log = log;
  }

  /**
   * What `role` may do on the app's private channel `name`. The app (secret key, realtime token) may do anything, an
   * anonymous caller nothing; an end user what the rule the name falls under allows, and what no rule covers is open to
   * every signed-in end user. A rule that cannot be judged (its members table gone) allows nothing.
   */
  async rights(appId: string, name: string, role: ChannelRole): Promise<ChannelRights> {
    if (role.kind === 'service') return ALL;
    if (role.kind === 'anon') return NONE;
    const db = this.#databases.sql(appId);
    try {
      const match = matchChannel(await readChannelRules(db), name);
      if (!match) return ALL;
      const { access } = match.rule;
      if (access === 'authenticated') return ALL;
      if (access === 'service') return NONE;
      // User ids are uuids, which Postgres compares without regard to case.
      if (access === 'user') return match.rest.toLowerCase() === role.userId.toLowerCase() ? ALL : NONE;
      const member = await db.query(
        `select 1 from public.${pg.escapeIdentifier(access.members)} where user_id = $1 and ${pg.escapeIdentifier(access.key)}::text = $2 limit 1`,
        [role.userId, match.rest],
      );
      if (!member.rowCount) return NONE;
      return { read: true, write: access.write === 'members' };
    } catch (err) {
      this.#log.warn({ err, app_id: appId }, 'private channel access could not be judged');
      return NONE;
    }
  }
}
