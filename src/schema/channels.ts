// Private realtime channels' declared access: the schema definition's `channels`, a topic pattern per rule, saying who
// may read (join) and write (broadcast, track presence) a private channel. Kept in svc_realtime.channel_access (app
// migration 9) by the apply's migration, like the tables' access; src/realtime/channel-access.ts judges by it.
import pg from 'pg';
import { errors } from '../core/errors.ts';
import type { SchemaChange } from './changes.ts';
import type { ChannelAccess, ChannelRule, Definition } from './definition.ts';
import { checkIdentifier } from './identifiers.ts';
import type { FinalState } from './final-state.ts';
import { USER_ID } from './table-info.ts';

export const MAX_CHANNEL_RULES = 50;
/** A channel name (its topic without `realtime:`) is at most 246 bytes: the topic's 255 less the prefix. */
const MAX_PATTERN_BYTES = 246;
const WILDCARD = '*';

type Queryable = { query<R extends pg.QueryResultRow>(text: string): Promise<pg.QueryResult<R>> };

type ChannelsInput = Record<string, ChannelAccess | { members: string; key: string; write?: 'members' | 'service' }>;

/** The definition's `channels`, checked, ordered by pattern; undefined keeps what the app has. */
export function normalizeChannels(input: ChannelsInput | undefined): ChannelRule[] | undefined {
  if (input === undefined) return undefined;
  const entries = Object.entries(input);
  if (entries.length > MAX_CHANNEL_RULES) throw errors.validation(`channels lists ${entries.length} patterns; at most ${MAX_CHANNEL_RULES} are allowed.`);
  return byPattern(entries.map(([pattern, access]) => normalizeRule(pattern, access)));
}

const byPattern = (rules: ChannelRule[]): ChannelRule[] => rules.sort((a, b) => (a.pattern < b.pattern ? -1 : a.pattern > b.pattern ? 1 : 0));

function normalizeRule(pattern: string, input: ChannelsInput[string]): ChannelRule {
  const label = `channels['${pattern.slice(0, 60)}']`;
  if (pattern.length === 0 || Buffer.byteLength(pattern) > MAX_PATTERN_BYTES) throw errors.validation(`${label}: a pattern is 1-${MAX_PATTERN_BYTES} bytes.`);
  // Controls would make a pattern no topic can be written as; a * anywhere but the end would read as a wildcard it is not.
  if (/[\u0000-\u001f\u007f]/.test(pattern)) throw errors.validation(`${label}: a pattern has no control characters.`);
  if (pattern.slice(0, -1).includes(WILDCARD)) throw errors.validation(`${label}: '*' may only end a pattern ('room:*' covers every topic starting 'room:').`);
  const access: ChannelAccess = typeof input === 'string' ? input : { members: input.members, key: input.key, write: input.write ?? 'members' };
  if (typeof access === 'string' && access !== 'user') return { pattern, access };
  if (!pattern.endsWith(WILDCARD)) {
    throw errors.validation(`${label}: ${typeof access === 'string' ? "'user'" : 'a group'} access needs a pattern ending in '*', where the ${typeof access === 'string' ? "end user's id" : "group's key"} goes ('${pattern}*').`);
  }
  if (typeof access === 'object') {
    checkIdentifier(access.members, `${label}.members`);
    checkIdentifier(access.key, `${label}.key`);
  }
  return { pattern, access };
}

/** Every group rule in force after the apply (the definition's, else the app's) names a members table that will exist. */
export function checkChannelRules(def: Definition, live: readonly ChannelRule[], final: FinalState): void {
  for (const { pattern, access } of def.channels ?? live) {
    if (typeof access !== 'object') continue;
    const members = final.get(access.members);
    const where = `Channel pattern '${pattern}' is joined by members of '${access.members}'`;
    if (!members) throw errors.validation(`${where}, a table that does not exist after this apply. Define it (user_id uuid and '${access.key}'), or change channels.`);
    if (members.columns.get(USER_ID)?.type !== 'uuid') throw errors.validation(`${where}, which has no ${USER_ID} uuid column to say whose membership a row is.`);
    if (!members.columns.has(access.key)) throw errors.validation(`${where}, which has no column '${access.key}' (the channel's key).`);
  }
}

/** The change to the stored rules, when the definition gives rules that differ from the app's. */
export function channelChanges(def: Definition, live: readonly ChannelRule[]): SchemaChange[] {
  if (def.channels === undefined || canonical(def.channels) === canonical(live)) return [];
  return [{ kind: 'set_channels', rules: def.channels }];
}

/** The rules replace the app's as a whole. */
export function channelsSql(rules: readonly ChannelRule[]): string[] {
  const out = ['DELETE FROM svc_realtime.channel_access'];
  if (rules.length === 0) return out;
  const values = rules.map((r) => `(${pg.escapeLiteral(r.pattern)}, ${pg.escapeLiteral(JSON.stringify(r.access))}::jsonb)`);
  return [...out, `INSERT INTO svc_realtime.channel_access (pattern, access) VALUES ${values.join(', ')}`];
}

/** The app's rules, in normalizeChannels' order and spelling (jsonb keeps an object's keys in an order of its own). */
export async function readChannelRules(db: Queryable): Promise<ChannelRule[]> {
  const { rows } = await db.query<ChannelRule>('select pattern, access from svc_realtime.channel_access');
  return byPattern(rows.map(({ pattern, access }) => ({ pattern, access: typeof access === 'string' ? access : { members: access.members, key: access.key, write: access.write } })));
}

const canonical = (rules: readonly ChannelRule[]): string => JSON.stringify(rules);

/** schema_get's `channels`: the rules as a definition writes them. */
export function describeChannels(rules: readonly ChannelRule[]): Record<string, ChannelAccess> {
  return Object.fromEntries(rules.map((r) => [r.pattern, r.access]));
}

/**
 * The rule a private channel's name falls under: its own pattern, else the longest pattern ending in '*' that it starts
 * with; `rest` is what the '*' stands for (the end user's id, the group's key).
 */
export function matchChannel(rules: readonly ChannelRule[], name: string): { rule: ChannelRule; rest: string } | undefined {
  let best: { rule: ChannelRule; rest: string } | undefined;
  for (const rule of rules) {
    if (rule.pattern === name) return { rule, rest: '' };
    if (!rule.pattern.endsWith(WILDCARD)) continue;
    const prefix = rule.pattern.slice(0, -1);
    if (name.startsWith(prefix) && (!best || prefix.length > best.rule.pattern.length - 1)) best = { rule, rest: name.slice(prefix.length) };
  }
  return best;
}
