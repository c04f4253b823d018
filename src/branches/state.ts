// What a merge compares of an app: its schema as schema_get shows it (less the policies, which access and conditions
// make), its functions (code, trigger, limits), its live site (by content) and its AI settings, flattened into units
// (one column, one index, one table attribute, one function...) keyed by name, each with its canonical JSON. Two apps
// built alike give equal units whatever their ids, so a branch and its parent compare unit by unit (three-way.ts).
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AppSql } from '../apps/app-databases.ts';
import type { ControlDatabase } from '../db/types.ts';
import { jsonObject } from '../db/json.ts';
import { getSchema } from '../schema/service.ts';
import { createReadStream } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

/** A unit's key: `table:<t>`, `table:<t>/column:<c>`, `table:<t>/index:<i>`, `table:<t>/<attribute>`, `sqlfn:<f>`, `channel:<p>`, `function:<f>`, `site`, `ai`. */
export type Units = Record<string, string>;

/** An app's state as a merge sees it: its units, and what a merge needs to carry a unit over (function code, the site). */
export interface AppState {
  units: Units;
  /** The deployment the site's unit was read from; null without a live site. */
  siteDeployment: string | null;
}

export interface StateDeps {
  db: Kysely<ControlDatabase>;
  appSql: (appId: string) => AppSql;
  siteDir: (appId: string, deploymentId: string) => string;
}

/** JSON with object keys sorted, so that equal values have equal texts whatever order they were built in. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

/** The table attributes compared as one unit each (columns and indexes are units of their own). */
export const TABLE_ATTRIBUTES = ['access', 'conditions', 'plans', 'realtime', 'foreignKeys'] as const;

export async function readState(deps: StateDeps, appId: string): Promise<AppState> {
  const [schema, functions, site, ai] = await Promise.all([
    getSchema(deps.appSql(appId)),
    deps.db
      .selectFrom('functions')
      .select(['name', 'description', 'code', 'timeout_ms', 'memory_limit_mb', 'trigger_type', 'trigger_config'])
      .where('app_id', '=', appId)
      .execute(),
    deps.db.selectFrom('frontend_deployments').select(['id', 'framework']).where('app_id', '=', appId).where('live', '=', true).executeTakeFirst(),
    deps.db.selectFrom('ai_configs').select(['default_model', 'max_tokens_per_request', 'allowed_models', 'end_user_daily_token_limit']).where('app_id', '=', appId).executeTakeFirst(),
  ]);
  const units: Units = {};
  for (const [name, table] of Object.entries(schema.tables)) {
    const t = `table:${name}`;
    units[t] = '"table"';
    for (const [column, spec] of Object.entries(table.columns)) units[`${t}/column:${column}`] = canonical(spec);
    for (const [index, spec] of Object.entries(table.indexes)) units[`${t}/index:${index}`] = canonical(spec);
    for (const attribute of TABLE_ATTRIBUTES) {
      const value = (table as Record<string, unknown>)[attribute];
      if (value !== undefined) units[`${t}/${attribute}`] = canonical(value);
    }
  }
  for (const [pattern, access] of Object.entries(schema.channels ?? {})) units[`channel:${pattern}`] = canonical(access);
  for (const [name, declaration] of Object.entries(schema.functions ?? {})) units[`sqlfn:${name}`] = canonical(declaration);
  for (const f of functions) {
    units[`function:${f.name}`] = canonical({
      code: f.code,
      description: f.description,
      timeout_ms: f.timeout_ms,
      memory_limit_mb: f.memory_limit_mb,
      trigger: { type: f.trigger_type, config: jsonObject(f.trigger_config) },
    });
  }
  if (site) units.site = canonical({ framework: site.framework, files: await siteDigest(deps.siteDir(appId, site.id), site.id) });
  if (ai) units.ai = canonical(ai);
  return { units, siteDeployment: site?.id ?? null };
}

/** The content digest of the site a state's unit names, or null without a site. */
export function siteDigestOf(units: Units): string | null {
  return units.site === undefined ? null : (JSON.parse(units.site) as { files: string }).files;
}

/** The same digest as the site's unit, of files held in memory. */
export function filesDigest(files: ReadonlyArray<{ path: string; bytes: Buffer }>): string {
  return digestOfFiles(files.map((f) => fileLine(f.path, createHash('sha256').update(f.bytes).digest('hex'))));
}

/** One file of a site's digest: its path and the sha256 of its bytes. */
const fileLine = (filePath: string, sha256: string) => `${filePath}\t${sha256}`;

/** The site's digest of its file lines, in any order. */
const digestOfFiles = (lines: string[]) => createHash('sha256').update(lines.sort().join('\n')).digest('hex');

/** A digest of a whole state: what a merge's plan was made against, checked again before it is applied. */
export function stateDigest(units: Units): string {
  return createHash('sha256').update(canonical(units)).digest('hex');
}

/** Deployments are immutable once live: each one's digest is computed once per process. */
const siteDigests = new Map<string, string>();
const SITE_DIGESTS_MAX = 1000;

/**
 * The site's files by content: each path with the sha256 of its bytes, sorted, hashed together. Files are streamed
 * through the hash one at a time, so a large site neither fills memory nor holds the event loop.
 */
async function siteDigest(dir: string, deploymentId: string): Promise<string> {
  const known = siteDigests.get(deploymentId);
  if (known) return known;
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? [] : Promise.reject(err)));
  const lines: string[] = [];
  for (const entry of entries.filter((e) => e.isFile())) {
    const full = path.join(entry.parentPath, entry.name);
    const hash = createHash('sha256');
    await pipeline(createReadStream(full), hash);
    lines.push(fileLine(path.relative(dir, full).split(path.sep).join('/'), hash.digest('hex')));
  }
  const digest = digestOfFiles(lines);
  if (siteDigests.size >= SITE_DIGESTS_MAX) siteDigests.delete(siteDigests.keys().next().value as string);
  siteDigests.set(deploymentId, digest);
  return digest;
}
