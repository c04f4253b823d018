import type { Catalog } from './catalog.ts';
import type { SchemaChange } from './changes.ts';
import { checkDefinitionReferences } from './checks.ts';
import type { ChannelRule, Definition } from './definition.ts';
import { channelChanges, checkChannelRules } from './channels.ts';
import { diffSchema, type CanonicalDefaults } from './diff.ts';
import { finalState } from './final-state.ts';
import { renderChanges } from './render.ts';
import type { FunctionRecord } from './functions.ts';

/**
 * The plan of a schema apply, in three steps: the references of the definition are checked against the state after
 * the apply (checks.ts), the definition is diffed against the catalog into typed changes (diff.ts), and the changes are
 * spelled out as SQL (render.ts). Every refusal is a 400 thrown before any SQL exists.
 */

export { dependencyOrder, type CanonicalDefaults } from './diff.ts';

/** The changes an apply of `def` makes to `catalog` and the app's private channel rules, in execution order. */
export function planChanges(
  def: Definition,
  catalog: Catalog,
  canonical: CanonicalDefaults = new Map(),
  channels: readonly ChannelRule[] = [],
  functions: readonly FunctionRecord[] = [],
): SchemaChange[] {
  const final = finalState(def, catalog);
  checkDefinitionReferences(def, catalog, final);
  checkChannelRules(def, channels, final);
  return [...diffSchema(def, catalog, final, canonical, functions), ...channelChanges(def, channels)];
}

/** The statements of the plan: what dry_run returns and an apply runs and records. */
export function planSchema(...inputs: Parameters<typeof planChanges>): string[] {
  return renderChanges(planChanges(...inputs));
}
