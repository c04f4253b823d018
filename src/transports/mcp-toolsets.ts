// The toolsets of /mcp: which areas of tools a session (2025-11-25) or a request (2026-07-28) lists, as the
// `toolsets` query parameter and the Mcp-Toolsets header name them.
import { AppError } from '../core/errors.ts';

/** The tool that grows a session's toolsets, and its area: sessions without that area cannot grow. */
export const TOOLSETS_TOOL = 'platform_toolsets_enable';
export const TOOLSETS_AREA = 'platform';

/** The header that, like the `toolsets` query parameter, picks a session's toolsets. */
export const TOOLSETS_HEADER = 'mcp-toolsets';
/** The header as texts for a model name it. */
export const TOOLSETS_HEADER_NAME = 'Mcp-Toolsets';

/**
 * The toolsets an initialize request asks for: the union of `?toolsets=` and the Mcp-Toolsets header (comma-separated
 * area names, `core`, `default`, `all`); `default` (`core`) when neither is given, because more is more than an agent
 * should carry in its context before it knows what it builds; the initialize instructions then name the toolsets the
 * session lacks. A name stands for itself only (`rag` is the rag tools alone); `default,rag` adds to the default set.
 * Unknown names are a 400 naming the valid ones.
 */
export function requestedAreas(query: unknown, header: unknown, areas: readonly string[]): Set<string> {
  const names = [query, header]
    .flatMap((v) => (Array.isArray(v) ? v : [v]))
    .filter((v): v is string => typeof v === 'string')
    .flatMap((v) => v.split(','));
  const areasOf = toolsetAreas(names, areas, 'Use /mcp?toolsets= (or the Mcp-Toolsets header) with comma-separated names from');
  return areasOf.size ? areasOf : new Set(DEFAULT_TOOLSETS);
}

/** The toolset of the typical flow's tools, across areas (tools/index.ts CORE_TOOLSET): not an area. */
export const CORE = 'core';

/** What `default`, and a session that names no toolsets, stands for. */
export const DEFAULT_TOOLSETS: readonly string[] = [CORE];

/**
 * The toolsets names stand for: areas and `core` (trimmed, case-insensitive; `default` is `core`, `all` every area).
 * Unknown names are a 400 VALIDATION_FAILED naming the valid ones, after `how` (how this caller names toolsets).
 */
export function toolsetAreas(given: readonly string[], areas: readonly string[], how: string): Set<string> {
  const names = given.map((v) => v.trim().toLowerCase()).filter(Boolean);
  const valid = [CORE, 'default', 'all', ...areas];
  const unknown = names.filter((n) => !valid.includes(n));
  if (unknown.length) {
    throw new AppError(
      400,
      'VALIDATION_FAILED',
      `Unknown toolset${unknown.length > 1 ? 's' : ''}: ${unknown.map((n) => `'${n.slice(0, 50)}'`).join(', ')}.`,
      `${how}: ${valid.join(', ')}.`,
      { valid },
    );
  }
  const out = new Set<string>();
  for (const n of names) {
    if (n === 'all') areas.forEach((a) => out.add(a));
    else if (n === 'default') DEFAULT_TOOLSETS.forEach((a) => out.add(a));
    else out.add(n);
  }
  return out;
}
