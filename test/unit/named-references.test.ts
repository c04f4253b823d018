// Hints, remediations, descriptions and guides name tools and routes ("restore it with apps_restore (POST
// /apps/{app_id}/restore)"): an agent follows them, so every name must exist. Words shaped like a tool name (an area's
// prefix and snake_case) are tools unless they are another identifier the platform defines (a table or column of a
// migration, a job, a field of a tool's input or output); "METHOD /path" texts must be a route of a tool or a raw route.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { tools } from '../../tools/index.ts';
import { jobs } from '../../workers/index.ts';
import { rawRoutes } from '../../src/transports/raw/index.ts';
import type { Services } from '../../src/services.ts';
import { loadConfig } from '../../src/config.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

function read(dir: string): Array<{ file: string; text: string }> {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.join(e.parentPath, e.name))
    .map((f) => ({ file: path.relative(ROOT, f), text: readFileSync(f, 'utf8') }));
}

/** Texts a model or a person reads: string and template literals with a space in them (not SQL, which is checked by Postgres). */
function prose(text: string): string[] {
  return [...text.matchAll(/'([^'\n]*)'|"([^"\n]*)"|`([^`]*)`/g)]
    .map((m) => m[1] ?? m[2] ?? m[3] ?? '')
    .filter((s) => s.includes(' ') && !/\b(select|insert into|update|delete from|create table|alter table)\b/i.test(s));
}

/** Property names anywhere in a JSON Schema. */
function propertyNames(schema: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) for (const s of schema) propertyNames(s, out);
  else if (schema && typeof schema === 'object') {
    for (const [key, value] of Object.entries(schema)) {
      if (key === 'properties' && value && typeof value === 'object') for (const name of Object.keys(value)) out.add(name);
      propertyNames(value, out);
    }
  }
  return out;
}

/** Identifiers the platform defines besides tools: migration identifiers, job names, tool fields. */
function otherIdentifiers(): Set<string> {
  const known = new Set<string>(jobs.map((j) => j.name));
  for (const { text } of read('db')) for (const m of text.matchAll(/\b[a-z]+(?:_[a-z0-9]+)+\b/g)) known.add(m[0]);
  for (const t of tools) {
    for (const schema of [t.input, t.output]) {
      try {
        for (const name of propertyNames(z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' }))) known.add(name);
      } catch {
        // a schema JSON Schema cannot express has no documented fields to collect
      }
    }
  }
  return known;
}

/** A route's path as segments: a parameter ({id}, :id) is null. */
type Segments = Array<string | null>;

const segmentsOf = (p: string): Segments =>
  p.replace(/\/$/, '').split('/').map((seg) => (/^\{[a-z_]+\}$|^:[a-zA-Z_]+$/.test(seg) ? null : seg));

/** Every "METHOD path" a client can call: tools' HTTP bindings and the raw routes. */
function routeTemplates(): Array<{ method: string; segments: Segments }> {
  const out: Array<{ method: string; segments: Segments }> = [];
  const add = (method: string, p: unknown) => {
    if (typeof p === 'string') out.push({ method, segments: segmentsOf(p) });
  };
  for (const t of tools) {
    if (!t.http) continue;
    for (const p of [t.http.path, t.http.subdomainPath]) add(t.http.method, p);
  }
  const record = (method: string) => (p: unknown) => add(method, p);
  const router = { get: record('GET'), post: record('POST'), put: record('PUT'), patch: record('PATCH'), delete: record('DELETE'), use: () => {} };
  const services = { config: loadConfig({ LOG_LEVEL: 'silent' }) } as unknown as Services;
  for (const r of rawRoutes) for (const mount of [r.early, r.fallback]) mount?.(router as never, services, pino({ level: 'silent' }));
  return out;
}

/** A text's route matches a template: its {param} only a parameter, its ${interpolation} any segment. */
function matches(text: string, template: Segments): boolean {
  const segs = text.replace(/\/$/, '').split('/');
  return (
    segs.length === template.length &&
    segs.every((seg, i) => {
      const t = template[i];
      if (seg.startsWith('${')) return true;
      if (t === null) return true;
      return seg === t;
    })
  );
}

describe('names in texts', () => {
  // Vendor adapters quote the vendor's own routes.
  const sources = [...read('src'), ...read('tools')].filter((s) => !s.file.startsWith('src/adapters/'));

  it('every tool a text names exists', () => {
    const names = new Set(tools.map((t) => t.name));
    const prefixes = new Set([...names].map((n) => n.split('_')[0]));
    const known = otherIdentifiers();
    const unknown = new Set<string>();
    let named = 0;
    for (const { file, text } of sources) {
      for (const s of prose(text)) {
        for (const [word] of s.matchAll(/\b[a-z]+(?:_[a-z0-9]+)+\b/g)) {
          if (names.has(word)) named++;
          else if (prefixes.has(word.split('_')[0]!) && !known.has(word)) unknown.add(`${file}: ${word}`);
        }
      }
    }
    expect([...unknown].sort()).toEqual([]);
    expect(named).toBeGreaterThan(100);
  });

  it('every route a text names exists', () => {
    const routes = routeTemplates();
    const unknown = new Set<string>();
    let named = 0;
    for (const { file, text } of sources) {
      for (const s of prose(text)) {
        for (const m of s.matchAll(/\b(GET|POST|PUT|PATCH|DELETE) (\/[^\s)'"`,;\\]*)/g)) {
          // A trailing colon or period ends the sentence; a query string is not part of the route.
          const route = m[2]!.replace(/[.:]+$/, '').replace(/\?.*$/, '');
          named++;
          if (!routes.some((r) => r.method === m[1] && matches(route, r.segments))) unknown.add(`${file}: ${m[1]} ${route}`);
        }
      }
    }
    expect([...unknown].sort()).toEqual([]);
    expect(named).toBeGreaterThan(30);
  });
});
