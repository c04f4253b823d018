// What declared SQL (conditions and function bodies) may name: functions, operators and types. Allow-lists, not
// deny-lists: a name Postgres adds in a later release is refused until someone reads what it does. The refusals below
// exist only to say *why* a tempting name is refused (docs/design/schema-functions.md §3.3).

const words = (text: string): Set<string> => new Set(text.trim().split(/\s+/));

/** Built-in (pg_catalog) functions: math, text, date/time, json, aggregates, window, arrays, ranges, full text. */
export const BUILTIN_FUNCTIONS = words(`
  abs ceil ceiling floor round trunc sign sqrt cbrt power pow exp ln log log10 mod div pi degrees radians random
  width_bucket gcd lcm scale trim_scale min_scale factorial sin cos tan asin acos atan atan2 sind cosd tand
  length char_length character_length octet_length bit_length lower upper initcap btrim ltrim rtrim lpad rpad substr
  substring left right replace reverse repeat split_part strpos position concat concat_ws format regexp_replace
  regexp_match regexp_matches regexp_split_to_array regexp_split_to_table regexp_count regexp_like regexp_substr
  regexp_instr starts_with translate md5 sha224 sha256 sha384 sha512 encode decode to_hex ascii chr quote_ident
  quote_literal quote_nullable overlay string_to_array string_to_table array_to_string to_char to_number normalize
  is_normalized like_escape similar_to_escape
  now clock_timestamp statement_timestamp transaction_timestamp date_trunc date_part extract age make_date make_time
  make_timestamp make_timestamptz make_interval justify_days justify_hours justify_interval date_bin isfinite
  timezone overlaps to_date to_timestamp
  to_json to_jsonb row_to_json array_to_json json_build_object jsonb_build_object json_build_array jsonb_build_array
  json_object jsonb_object jsonb_set jsonb_set_lax jsonb_insert jsonb_strip_nulls json_strip_nulls jsonb_pretty
  json_typeof jsonb_typeof json_array_length jsonb_array_length json_each jsonb_each json_each_text jsonb_each_text
  json_array_elements jsonb_array_elements json_array_elements_text jsonb_array_elements_text json_object_keys
  jsonb_object_keys json_extract_path jsonb_extract_path json_extract_path_text jsonb_extract_path_text
  json_populate_record jsonb_populate_record json_populate_recordset jsonb_populate_recordset json_to_record
  jsonb_to_record json_to_recordset jsonb_to_recordset jsonb_path_exists jsonb_path_match jsonb_path_query
  jsonb_path_query_array jsonb_path_query_first
  count sum avg min max bool_and bool_or every array_agg string_agg json_agg jsonb_agg json_object_agg
  jsonb_object_agg stddev stddev_pop stddev_samp variance var_pop var_samp percentile_cont percentile_disc mode corr
  covar_pop covar_samp bit_and bit_or
  row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value
  array_length array_lower array_upper array_ndims array_dims cardinality array_append array_prepend array_cat
  array_position array_positions array_remove array_replace array_fill unnest generate_series generate_subscripts
  isempty lower_inc upper_inc lower_inf upper_inf range_merge int4range int8range numrange tsrange tstzrange daterange
  to_tsvector to_tsquery plainto_tsquery phraseto_tsquery websearch_to_tsquery ts_rank ts_rank_cd ts_headline
  setweight strip tsvector_to_array array_to_tsvector numnode querytree ts_delete ts_filter
  gen_random_uuid num_nulls num_nonnulls
`);

/**
 * Functions of the app database's public schema: the platform's current_user_id() and those of the extensions it
 * installs there (pgvector, pgcrypto). Postgres creates declared functions under an empty search_path, so these are
 * written public.<name> in the compiled SQL.
 */
export const PUBLIC_FUNCTIONS = words(`
  current_user_id l2_distance cosine_distance inner_product l1_distance vector_dims vector_norm l2_normalize subvector
  digest hmac crypt gen_salt gen_random_bytes
`);

/** auth.uid() and auth.jwt(): the caller's id and claims (app migration 11). */
export const AUTH_FUNCTIONS = words('uid jwt');

const SQL_BY_STRING = 'it runs SQL or XML queries given as strings, which these checks cannot see';
const REFUSED_FUNCTIONS = new Map<string, string>([
  ['set_config', "it could rewrite request.jwt.claims and act as another user"],
  ['current_setting', "it reads server settings; use auth.jwt() for the caller's claims"],
  ['nextval', 'sequences belong to column defaults; declare a default instead'],
  ['setval', 'sequences belong to column defaults; declare a default instead'],
  ['currval', 'sequences belong to column defaults; declare a default instead'],
  ['lastval', 'sequences belong to column defaults; declare a default instead'],
  ['ts_stat', SQL_BY_STRING],
  ['xpath', SQL_BY_STRING],
  ['xpath_exists', SQL_BY_STRING],
  ['xmlexists', SQL_BY_STRING],
]);

/** Why a tempting function is refused, or undefined when it is simply not on the list. */
export function functionRefusal(name: string): string | undefined {
  const fixed = REFUSED_FUNCTIONS.get(name);
  if (fixed !== undefined) return fixed;
  if (name.startsWith('pg_sleep')) return 'it holds a connection while doing nothing';
  if (name.startsWith('pg_advisory') || name.startsWith('pg_try_advisory')) return 'advisory locks outlive the statement';
  if (name.includes('_to_xml')) return SQL_BY_STRING;
  if ((name.startsWith('has_') && name.endsWith('_privilege')) || name.startsWith('to_reg')) return "it probes other schemas' objects";
  if (name.startsWith('pg_')) return 'it reaches server internals or files';
  if (name.startsWith('lo_')) return "large objects are outside the app's tables";
  if (name.startsWith('dblink')) return 'it connects to other databases';
  return undefined;
}

/** Operators by name: comparison, arithmetic, text, LIKE and regex, jsonb, arrays and ranges, full text. */
export const OPERATORS = words(`
  = <> < > <= >= + - * / % ^ || ~~ ~~* !~~ !~~* ~ ~* !~ !~* -> ->> #> #>> #- @> <@ ? ?| ?& && @@ @? <-> <=> <#> <+>
`);

/** pgvector's distance operators live in public: compiled as OPERATOR(public.<op>) (unqualified ones are pg_catalog's). */
export const PUBLIC_OPERATORS = words('<-> <=> <#> <+>');

/**
 * Types a cast or column definition may name: the column types of a schema definition, as the parser spells them
 * (int, integer and int4 all parse to int4; keyword types come as pg_catalog.<name>), plus tsquery for full text.
 */
export const BUILTIN_TYPES = words(`
  text varchar bpchar int2 int4 int8 float4 float8 numeric bool uuid date time timetz timestamp timestamptz interval
  json jsonb bytea int4range int8range numrange tsrange tstzrange daterange tsvector tsquery
`);

/** Object-identifier types: a cast to one looks names up in any schema (the catalogs' own reflection). */
export const REG_TYPES = words(`
  regclass regproc regprocedure regoper regoperator regtype regrole regnamespace regconfig regdictionary regcollation
`);

/** pgvector's type, in public like its operators. */
export const PUBLIC_TYPES = words('vector');

/** CURRENT_DATE and the other clock values; CURRENT_USER and its kind name roles and schemas. */
export const CLOCK_VALUES = words(`
  SVFOP_CURRENT_DATE SVFOP_CURRENT_TIME SVFOP_CURRENT_TIME_N SVFOP_CURRENT_TIMESTAMP SVFOP_CURRENT_TIMESTAMP_N
  SVFOP_LOCALTIME SVFOP_LOCALTIME_N SVFOP_LOCALTIMESTAMP SVFOP_LOCALTIMESTAMP_N
`);

/** Statements refused in a body, by their SQL names. */
const STATEMENT_NAMES: Record<string, string> = {
  VariableSetStmt: 'SET/RESET',
  VariableShowStmt: 'SHOW',
  CopyStmt: 'COPY',
  DoStmt: 'DO',
  CallStmt: 'CALL',
  TransactionStmt: 'transaction control (BEGIN/COMMIT/ROLLBACK/SAVEPOINT)',
  GrantStmt: 'GRANT/REVOKE',
  GrantRoleStmt: 'GRANT/REVOKE',
  LockStmt: 'LOCK',
  TruncateStmt: 'TRUNCATE',
  MergeStmt: 'MERGE',
  ListenStmt: 'LISTEN',
  UnlistenStmt: 'UNLISTEN',
  NotifyStmt: 'NOTIFY',
  PrepareStmt: 'PREPARE',
  ExecuteStmt: 'EXECUTE',
  DeallocateStmt: 'DEALLOCATE',
  ExplainStmt: 'EXPLAIN',
  VacuumStmt: 'VACUUM/ANALYZE',
  CreateTableAsStmt: 'CREATE TABLE AS',
  DeclareCursorStmt: 'cursors',
  FetchStmt: 'cursors',
  ClosePortalStmt: 'cursors',
  DiscardStmt: 'DISCARD',
  LoadStmt: 'LOAD',
  CheckPointStmt: 'CHECKPOINT',
  ClusterStmt: 'CLUSTER',
  ReindexStmt: 'REINDEX',
  RefreshMatViewStmt: 'REFRESH MATERIALIZED VIEW',
  ConstraintsSetStmt: 'SET CONSTRAINTS',
  CommentStmt: 'COMMENT',
  SecLabelStmt: 'SECURITY LABEL',
  AlterSystemStmt: 'ALTER SYSTEM',
};
const DDL_PREFIXES = ['Create', 'Alter', 'Drop', 'Rename', 'Define', 'View', 'Index', 'Rule', 'Composite', 'Reassign', 'ImportForeign'];

/** Constructs refused inside expressions, by their SQL names. */
const CONSTRUCT_NAMES: Record<string, string> = {
  XmlExpr: 'XML functions',
  XmlSerialize: 'XMLSERIALIZE',
  CurrentOfExpr: 'WHERE CURRENT OF',
  GroupingFunc: 'GROUPING()',
  RangeTableSample: 'TABLESAMPLE',
  RangeTableFunc: 'XMLTABLE',
  JsonTable: 'JSON_TABLE',
};

/** The SQL name of a parse-tree node kind, for a refusal. */
export function sqlName(nodeType: string): string {
  const named = STATEMENT_NAMES[nodeType] ?? CONSTRUCT_NAMES[nodeType];
  if (named !== undefined) return named;
  if (DDL_PREFIXES.some((p) => nodeType.startsWith(p)) && nodeType.endsWith('Stmt')) return 'DDL (CREATE/ALTER/DROP)';
  if (nodeType.startsWith('Json')) return 'SQL/JSON syntax (use the jsonb functions and operators)';
  return `the construct ${nodeType}`;
}
