import { readFileSync } from 'node:fs';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_TOOLSET_AREAS, toolAreas, tools } from '../../tools/index.ts';
import { LLMS_TXT_PATH } from '../../src/platform.ts';
import { renderAreaSection } from '../../src/platform/docs.ts';
import { McpTransport, requestedAreas } from '../../src/transports/mcp.ts';
import type { Services } from '../../src/core/services.ts';

/*
 * Context budget (issue 9, "Cost in context"): what an MCP-only agent must read before its first call.
 *
 * Measured when the budget was set (tools/list without outputSchema; data_select alone carries the query syntax
 * and access rules, the other data tools refer to it): all 62,527 B (56 tools), default 59,564 B, largest area
 * storage 11,375 B; /llms.txt 51,255 B (53,786 B before that trim). Before toolsets and before dropping
 * outputSchema, tools/list was 102,843 B.
 *
 * The budgets are ceilings for the whole surface after the coming areas, not today's size plus a margin: about
 * 72 KB (~18k tokens) for `all` is what fits an agent's context comfortably next to its work, so new tools must
 * pay for themselves by tightening existing texts (first candidates: the prefer/accept texts still repeated in
 * every data_* tool's input schema, the storage upload and deploy tools' long descriptions, functions_deploy's
 * 2 KB description). A single
 * area stays under 16 KB so that `?toolsets=<area>` is always cheap. /llms.txt is budgeted at its current size
 * plus a little (it is still a second copy of the tool list; restructuring it into a short guide is future work,
 * and that change should lower this number).
 */
const BUDGET = {
  all: 72 * 1024,
  default: 68 * 1024,
  area: 16 * 1024,
  llmsTxt: 10 * 1024,
  areaSection: 16 * 1024,
};

const areas = Object.keys(toolAreas);
const transport = new McpTransport(tools, {} as Services, pino({ level: 'silent' }));
afterAll(() => transport.close());

/** The bytes of a tools/list result for these toolsets, as the server serializes it. */
function listBytes(toolsets: string): number {
  return Buffer.byteLength(JSON.stringify({ tools: transport.listFor(requestedAreas(toolsets, undefined, areas)) }));
}

describe('context budget', () => {
  it(`tools/list for all toolsets is at most ${BUDGET.all} bytes`, () => {
    expect(listBytes('all')).toBeLessThanOrEqual(BUDGET.all);
  });

  it(`tools/list for the default toolset is at most ${BUDGET.default} bytes`, () => {
    expect(listBytes('default')).toBeLessThanOrEqual(BUDGET.default);
  });

  it.each(areas)(`tools/list for the %s toolset alone is at most ${BUDGET.area} bytes`, (area) => {
    expect(listBytes(area)).toBeLessThanOrEqual(BUDGET.area);
  });

  it(`/llms.txt is at most ${BUDGET.llmsTxt} bytes`, () => {
    expect(Buffer.byteLength(readFileSync(LLMS_TXT_PATH, 'utf8'))).toBeLessThanOrEqual(BUDGET.llmsTxt);
  });

  it.each(areas)(`the guide's section of the %s area (/llms.txt?area=) is at most ${BUDGET.areaSection} bytes`, (area) => {
    expect(Buffer.byteLength(renderAreaSection(area, toolAreas[area]!))).toBeLessThanOrEqual(BUDGET.areaSection);
  });

  it('tools/list declares no outputSchema', () => {
    for (const t of transport.listFor(requestedAreas('all', undefined, areas))) expect(t).not.toHaveProperty('outputSchema');
  });
});

describe('toolsets', () => {
  it('every tool is in exactly one area, and the areas are the tool name prefixes or folders', () => {
    const names = Object.values(toolAreas).flat().map((t) => t.name);
    expect(names.sort()).toEqual(tools.map((t) => t.name).sort());
    expect(new Set(names).size).toBe(names.length);
    for (const a of DEFAULT_TOOLSET_AREAS) expect(areas).toContain(a);
  });

  it('none given is default; default leaves keys out; all is every area; names combine and are case-insensitive', () => {
    expect(requestedAreas(undefined, undefined, areas)).toEqual(new Set(DEFAULT_TOOLSET_AREAS));
    expect(requestedAreas('', ' ', areas)).toEqual(new Set(DEFAULT_TOOLSET_AREAS));
    expect(requestedAreas('all', undefined, areas)).toEqual(new Set(areas));
    expect(requestedAreas('default', undefined, areas)).toEqual(new Set(DEFAULT_TOOLSET_AREAS));
    expect(requestedAreas('default', undefined, areas).has('keys')).toBe(false);
    expect(requestedAreas('Data, storage', 'keys', areas)).toEqual(new Set(['data', 'storage', 'keys']));
    const listed = transport.listFor(requestedAreas('data', undefined, areas)).map((t) => t.name);
    expect(listed.length).toBeGreaterThan(0);
    for (const n of listed) expect(n).toMatch(/^data_/);
  });

  it('an unknown toolset is a 400 naming the valid ones', () => {
    let caught: unknown;
    try {
      requestedAreas('data,nope', undefined, areas);
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', message: expect.stringContaining("'nope'") });
    expect((caught as { remediation: string }).remediation).toContain('default, all, apps');
  });
});
