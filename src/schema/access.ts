// A table's declared access, as a definition writes it and as the plan uses it: a single mode ('user', 'public',
// 'authenticated', 'service'), a group ({ members, column, key?, write? }), or rules that combine them ({ read, write,
// owners, group }). Each form is checked here without the database; checks.ts checks the columns and tables it names.
import { z } from 'zod';
import { errors } from '../core/errors.ts';
import { READERS, WRITERS, type GroupAccess, type Reader, type RulesAccess, type TableAccess, type Writer } from './catalog.ts';
import { checkIdentifier } from './identifiers.ts';
import { strictly } from './guided.ts';

export const ACCESS_VALUES = ['user', 'public', 'authenticated', 'service'] as const;
/** Owner columns one table may name. */
export const MAX_OWNERS = 4;
const DEFAULT_OWNER = 'user_id';

const GroupAccessInputSchema = z.strictObject({
  members: z.string(),
  column: z.string(),
  key: z.string().optional(),
  write: z.enum(['members', 'service']).optional(),
});

// Readers and writers are checked by whoList, which names the allowed values: listing them in the input schema as
// well would cost every session's tools/list twice the bytes.
const oneOrMany = z.union([z.string(), z.array(z.string()).min(1)]);

const RulesAccessInputSchema = z.strictObject({
  read: oneOrMany,
  write: oneOrMany.optional(),
  owners: z.array(z.string()).min(1).max(MAX_OWNERS).optional(),
  group: z.strictObject({ members: z.string(), column: z.string(), key: z.string().optional() }).optional(),
});

export const AccessInputSchema = z
  .union([z.enum(ACCESS_VALUES), z.record(z.string(), z.unknown())])
  .describe('user, public, authenticated, service, a group {members, column} or rules {read, write?, owners?, group?} (guide); default user if user_id uuid, else service');
export type AccessInput = z.output<typeof AccessInputSchema>;

export function normalizeAccess(table: string, given: AccessInput | undefined): TableAccess | undefined {
  if (typeof given !== 'object') return given;
  // Rules have `read`; anything else is read as a group, whose schema then names what is missing or unknown.
  const path = `tables.${table}.access`;
  if ('read' in given) return normalizeRules(table, strictly(RulesAccessInputSchema, given, path)!);
  const input = strictly(GroupAccessInputSchema, given, path)!;
  const access: GroupAccess = { members: input.members, column: input.column, key: input.key ?? input.column, write: input.write ?? 'members' };
  checkIdentifier(access.members, `access.members of table '${table}'`);
  checkIdentifier(access.column, `access.column of table '${table}'`);
  checkIdentifier(access.key, `access.key of table '${table}'`);
  return access;
}

type RulesInput = z.output<typeof RulesAccessInputSchema>;

/**
 * Rules, normalized: 'service' alone is the empty list (keys only) and combines with nothing; write defaults to 'owner'
 * when owners are named or read has 'owner', else to keys only; owners default to user_id where 'owner' is used; a
 * group is given exactly when 'group' is used.
 */
function normalizeRules(table: string, input: RulesInput): RulesAccess {
  const where = `access of table '${table}'`;
  const read = whoList<Reader>(input.read, READERS, `${where}: read`);
  const write = input.write === undefined ? (input.owners || read.includes('owner') ? (['owner'] as Writer[]) : []) : whoList<Writer>(input.write, WRITERS, `${where}: write`);
  const usesOwner = read.includes('owner') || write.includes('owner');
  if (input.owners && !usesOwner) throw errors.validation(`${where} names owners but neither read nor write has 'owner'; add 'owner' or leave owners out.`);
  const owners = usesOwner ? [...new Set(input.owners ?? [DEFAULT_OWNER])] : [];
  for (const owner of owners) checkIdentifier(owner, `access.owners of table '${table}'`);
  const usesGroup = read.includes('group') || write.includes('group');
  if (usesGroup !== (input.group !== undefined)) {
    throw errors.validation(usesGroup ? `${where} has 'group' but no group: add group { members, column, key? }.` : `${where} gives a group but neither read nor write has 'group'; add 'group' or leave group out.`);
  }
  const rules: RulesAccess = { read, write, owners };
  if (input.group) {
    const group = { members: input.group.members, column: input.group.column, key: input.group.key ?? input.group.column };
    checkIdentifier(group.members, `access.group.members of table '${table}'`);
    checkIdentifier(group.column, `access.group.column of table '${table}'`);
    checkIdentifier(group.key, `access.group.key of table '${table}'`);
    rules.group = group;
  }
  return rules;
}

/** A reader or writer list in a fixed order, without repeats; 'service' (keys only) stands alone as []. */
function whoList<T extends string>(input: string | string[], order: readonly T[], label: string): T[] {
  const given = new Set(typeof input === 'string' ? [input] : input);
  const unknown = [...given].find((who) => who !== 'service' && !(order as readonly string[]).includes(who));
  if (unknown !== undefined) throw errors.validation(`${label}: '${unknown.slice(0, 40)}' is none of ${[...order, 'service'].join(', ')}.`);
  if (given.has('service')) {
    if (given.size > 1) throw errors.validation(`${label}: 'service' means keys only and combines with nothing; list the others without it.`);
    return [];
  }
  return order.filter((who) => given.has(who));
}

/** The group a table's access shares, in either form. */
export function accessGroup(access: TableAccess | null | undefined): { members: string; column: string; key: string } | undefined {
  if (typeof access !== 'object' || access === null) return undefined;
  return 'read' in access ? access.group : access;
}
