// Names an app's schema may use: identifiers Postgres takes without quoting, no reserved words or platform prefixes,
// no route segments for tables. Apart from definition.ts so that every part of the schema area can check names.
import { errors } from '../core/errors.ts';

/** Postgres keywords of categories R (reserved) and T (reserved, may be a function or type name), from pg_get_keywords(). */
const RESERVED = new Set(
  (
    'all analyse analyze and any array as asc asymmetric both case cast check collate column constraint create current_catalog ' +
    'current_date current_role current_time current_timestamp current_user default deferrable desc distinct do else end except ' +
    'false fetch for foreign from grant group having in initially intersect into lateral leading limit localtime localtimestamp ' +
    'not null offset on only or order placing primary references returning select session_user some symmetric table then to ' +
    'trailing true union unique user using variadic when where window with ' +
    'authorization binary collation concurrently cross current_schema freeze full ilike inner is isnull join left like natural ' +
    'notnull outer overlaps right similar tablesample verbose'
  ).split(' '),
);

/** First path segments of the app API: a table with one of these names would be shadowed by (or shadow) a route. */
export const ROUTE_SEGMENTS = new Set(
  'schema migrations auth storage functions fn frontend domains ai rag people integrations billing chat embeddings models responses realtime rpc data keys app sites'.split(' '),
);

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** Throws a 400 naming `label` (e.g. "Column 'posts.Title'") when `name` is not a usable identifier. */
export function checkIdentifier(name: string, label: string): void {
  if (!IDENTIFIER.test(name)) {
    throw errors.validation(`${label}: '${name}' is not a valid name; use 1-63 lowercase letters, digits and underscores, starting with a letter or underscore.`);
  }
  if (RESERVED.has(name)) throw errors.validation(`${label}: '${name}' is a reserved SQL keyword; choose another name.`);
  if (name.startsWith('svc_') || name.startsWith('pg_')) {
    throw errors.validation(`${label}: '${name}' starts with a reserved prefix (svc_ or pg_); choose another name.`);
  }
}

