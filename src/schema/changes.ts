import type { TableAccess } from './catalog.ts';
import type { CompiledConditions, TableConditions } from './conditions.ts';
import type { CompiledFunction, DroppedFunction } from './function-changes.ts';
import type { ChannelRule, ColumnSpec, ForeignKeySpec, IndexSpec, Reference } from './definition.ts';

/**
 * The plan as typed operations, between the diff (diff.ts: definition + catalog -> changes) and the SQL (render.ts:
 * changes -> statements). A list of changes is in execution order: the diff puts every object before what depends on
 * it, so the renderer only spells each change out. No change carries SQL; identifiers and values are plain strings.
 */

/** A column as CREATE TABLE and ADD COLUMN spell it; the primary key and foreign keys are said elsewhere. */
export type ColumnDefinition = Omit<ColumnSpec, 'primary' | 'references'>;

/** A column of a new table, with the foreign key made inline (null: none, or one added later by add_foreign_key). */
export type NewTableColumn = ColumnDefinition & { references: Reference | null };

export type SchemaChange =
  // ---- tables
  /** One change for all dropped tables: Postgres orders the drops itself, even when they reference each other. */
  | { kind: 'drop_tables'; tables: string[] }
  | { kind: 'create_table'; table: string; columns: NewTableColumn[]; primaryKey: string[] }
  // ---- columns of existing tables
  | { kind: 'add_column'; table: string; column: ColumnDefinition }
  | { kind: 'drop_column'; table: string; column: string }
  | { kind: 'set_nullable'; table: string; column: string; nullable: boolean }
  /** `default` null drops the default. */
  | { kind: 'set_default'; table: string; column: string; default: string | null }
  /** Also starts the sequence past the ids the rows already have. */
  | { kind: 'add_identity'; table: string; column: string }
  | { kind: 'drop_identity'; table: string; column: string }
  | { kind: 'add_enum'; table: string; column: string; values: string[] }
  | { kind: 'drop_enum'; table: string; column: string; constraint: string }
  | { kind: 'add_unique'; table: string; column: string }
  | { kind: 'drop_unique'; table: string; column: string; constraint: string }
  // ---- keys and indexes
  | { kind: 'add_foreign_key'; table: string; column: string; references: Reference }
  | { kind: 'add_composite_foreign_key'; table: string; foreignKey: ForeignKeySpec }
  /** A single-column or multi-column key, by its constraint name. */
  | { kind: 'drop_foreign_key'; table: string; constraint: string }
  | { kind: 'create_index'; table: string; index: IndexSpec }
  | { kind: 'drop_index'; table: string; index: string }
  // ---- row-level security
  /** (Re)builds the access policies, the user_id fill trigger when rows carry user_id, and the stored access. */
  | { kind: 'set_access'; table: string; access: TableAccess; hasUserId: boolean; enableRls: boolean; keyType?: string }
  /** Drops the access policies (not the plan gate), before the columns they depend on; `rules`: those of rules too. */
  | { kind: 'drop_access_policies'; table: string; group: boolean; rules?: true }
  | { kind: 'drop_fill_trigger'; table: string }
  // ---- billing plans gating end users; each also stores the plans beside the table's access
  | { kind: 'create_plan_gate'; table: string; plans: string[] }
  | { kind: 'alter_plan_gate'; table: string; plans: string[] }
  | { kind: 'drop_plan_gate'; table: string }
  // ---- realtime: the capture triggers of postgres_changes
  | { kind: 'set_realtime'; table: string; enabled: boolean }
  // ---- declared conditions: their restrictive policies, and the conditions kept as written
  | { kind: 'drop_conditions'; table: string }
  /** `compiled`: each condition checked and qualified by src/schema/sql (expressions, not statements). */
  | { kind: 'set_conditions'; table: string; conditions: TableConditions; compiled: CompiledConditions }
  // ---- declared SQL functions (function-changes.ts)
  /** One DROP for all: those the definition drops and those rebuilt around a change Postgres refuses under them. */
  | { kind: 'drop_functions'; functions: DroppedFunction[] }
  /** In call order, under an empty search_path; each `body` checked and qualified by src/schema/sql. */
  | { kind: 'create_functions'; functions: CompiledFunction[] }
  /** The private channels' access rules, replaced as a whole. */
  | { kind: 'set_channels'; rules: ChannelRule[] };

export type SchemaChangeKind = SchemaChange['kind'];
