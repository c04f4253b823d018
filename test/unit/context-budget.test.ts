import { readFileSync } from 'node:fs';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { CORE_TOOLSET, toolAreas, tools } from '../../tools/index.ts';
import { LLMS_TXT_PATH } from '../../src/composition.ts';
import { renderAreaSection } from '../../src/platform/docs.ts';
import { McpTransport } from '../../src/transports/mcp.ts';
import { DEFAULT_TOOLSETS, requestedAreas } from '../../src/transports/mcp-toolsets.ts';
import type { Services } from '../../src/services.ts';

/*
 * Context budget (issue 9, "Cost in context"): what an MCP-only agent must read before its first call.
 *
 * Measured when these budgets were set (tools/list without outputSchema; reference detail such as limit tables,
 * error lists, the functions runtime contract and the schema types moved from the descriptions into the areas'
 * sections of the guide, which the descriptions point to with `platform_guide area=<area>`):
 *   tools/list  all 62,942 B (61 tools, the ai area's 7,099 B included; without it 55,849 B, and 62,711 B before
 *               the move), default 52,891 B (59,748 B before), largest area data 10,388 B (storage was 11,311 B,
 *               functions 11,341 B);
 *   the guide   /llms.txt 8,905 B (51,255 B when it still copied every tool);
 *   sections    largest data 11,210 B (/llms.txt?area=data), then storage 10,488 B and functions 10,235 B.
 * Before toolsets and before dropping outputSchema, tools/list was 102,843 B.
 *
 * Since sessions that name no toolsets get `default`, `all` is opt-in: its budget is the ceiling for the whole
 * surface after every planned area (RAG, substrate, billing, people, meetings, integrations), about 32k tokens, not
 * today's size. Measured when the rag area was added: all about 73 KB (70 tools; ai 7.3 KB, rag 9.8 KB).
 * Every area must pay for itself by tightening texts: detail belongs in the area's section
 * (src/platform/area-guides.ts), a description keeps what a correct first call and the next step need. A single
 * area stays small so that `?toolsets=default,<area>` is always cheap; an area's section is read on demand, one at a
 * time. `default` (what a session gets unasked) keeps its measured size plus a little. The guide grows by one index
 * line (~300 B) per area: 10,324 B with the substrate and memory areas, budgeted at 13 KB for the areas still planned.
 * The members area (an account's people for its admins' agents, 10 tools, 5,600 B), unplanned then, raised `all` to
 * 134,527 B and the guide to 13,437 B when it was added: budgets 136 KB and 14 KB. The templates area (9 tools, also
 * unplanned) took the guide to 14,577 B: budget 14.5 KB. The console (issue 30) found what a person's pages need and
 * the API lacked (one app's usage, cursors on long lists, an app's orders, row-level policies, function metrics):
 * added for every client, they raise `all` to 140 KB; `default` is unchanged. Issue 41 (the clients people already use)
 * added what agents need beside supabase-js's face of the same services, in default areas: auth_settings_get/set
 * (end users' e-mail, 1,505 B) and the storage buckets (three tools, 1,811 B), taking `default` to 58,884 B; with the
 * realtime area (issue 42: realtime_broadcast, realtime_status) `all` is 148,610 B and the guide 15,183 B. Budgets:
 * 58 KB, 146 KB and 15 KB. schema_apply then learned private channels' access (issue 42) and access rules (issue 43:
 * 'authenticated', rules of readers, writers, owners and a group), its input schema growing by 1,195 B after its
 * descriptions were cut: `default` 60,079 B, `all` 149,825 B. Budgets: 59 KB and 147 KB. Declared conditions and
 * partial indexes (issue 43) took schema_apply's input to `default` 60,767 B (all 150,513 B): budgets 60 KB and 148 KB,
 * which leave room for issue 43's declared functions only if they pay for themselves elsewhere. data_rpc (issue 43's
 * /rpc, the data area's one new MCP tool) measured 1,266 B in tools/list: `default` and `all` raised by exactly that.
 * With its REST-only GET route and the guide's /rpc paragraph the data area's section is 17,132 B: budget 17 KB.
 * schema_apply's input then showed its guided parts (access objects, conditions, channels, functions) as any object
 * checked by the definition itself, the shapes in the schema guide: `default` 60,529 B, `all` 150,275 B, core 22,851 B,
 * within 60 KB, 148 KB and 24 KB again. The branches area (issue 44: branches_create, _list, _diff, _merge, _delete,
 * _protect, planned by that issue and in no default toolset) measured 4,132 B in tools/list after its texts were cut
 * (branches_create's data options flattened from a union of objects: 2,219 B to 1,649 B), `all` 154,424 B, and its
 * index line took the guide to 15,571 B: budgets 151 KB and 15.5 KB; `default` and `core` are unchanged. Issue 45 then
 * shortened the two properties most tools repeat (app_id's description, user_token's): `default` 58,680 B, `all`
 * 150,130 B, core 22,496 B. Issue 45 then made `default` what `core` is (a session that names no toolsets gets the
 * typical flow's 14 tools, not 8 areas' 61) and cut the core entries (schema_apply's multi-column foreign keys as a
 * guided list, functions_deploy's trigger texts, descriptions): core 20,789 B.
 */
const BUDGET = {
  all: 151 * 1024,
  // The typical flow's tools across areas (CORE_TOOLSET), what a session gets unasked: measured 22,756 B when it was
  // added, 20,789 B once issue 45 made it the default and cut its entries.
  core: 22 * 1024,
  area: 12 * 1024,
  llmsTxt: 15.5 * 1024,
  areaSection: 17 * 1024,
};

const areas = Object.keys(toolAreas);
const transport = new McpTransport(tools, {} as Services, pino({ level: 'silent' }), new Uint8Array(32));
afterAll(() => transport.close());

/** The bytes of a tools/list result for these toolsets, as the server serializes it. */
function listBytes(toolsets: string): number {
  return Buffer.byteLength(JSON.stringify({ tools: transport.listFor(requestedAreas(toolsets, undefined, areas)) }));
}

/**
 * Issue 45's goal: what a default session's agent holds to build the tutoring marketplace (the schema's access rules,
 * conditions and partial indexes, functions' ctx.data.transaction) under 40 KB: the instructions, the default session's
 * tools/list and the schema's and the functions' notes (the guides without the tools tools/list holds). Measured
 * 86,697 B when the goal was set (a default of 8 areas, 58-60 KB of tools/list); met by a default of `core`, the
 * instructions carrying the flow and the pitfalls, functions' notes leaving other areas' ctx faces to those areas, the
 * schema's leaving realtime and plans to theirs, and shorter entries. test/e2e/tutoring-marketplace.test.ts measures
 * the same over MCP while an agent builds it.
 */
const MARKETPLACE_AREAS = ['schema', 'functions'];
const MARKETPLACE_GOAL = 40 * 1024;

describe('context budget', () => {
  it(`the default session plus the marketplace's guides is at most ${MARKETPLACE_GOAL} B`, () => {
    const instructions = Buffer.byteLength(transport.instructionsFor(requestedAreas(undefined, undefined, areas), true));
    const list = listBytes('default');
    const guides = MARKETPLACE_AREAS.map((a) => Buffer.byteLength(renderAreaSection(a, toolAreas[a]!, false)));
    const total = instructions + list + guides.reduce((a, b) => a + b, 0);
    console.log(`instructions ${instructions} B + default tools/list ${list} B + notes ${MARKETPLACE_AREAS.map((a, i) => `${a} ${guides[i]}`).join(', ')} = ${total} B (goal ${MARKETPLACE_GOAL} B)`);
    expect(total).toBeLessThanOrEqual(MARKETPLACE_GOAL);
  });

  it(`tools/list for all toolsets is at most ${BUDGET.all} bytes`, () => {
    expect(listBytes('all')).toBeLessThanOrEqual(BUDGET.all);
  });

  it(`tools/list for the core toolset is at most ${BUDGET.core} bytes, and lists exactly the core tools`, () => {
    expect(listBytes('core')).toBeLessThanOrEqual(BUDGET.core);
    expect(transport.listFor(requestedAreas('core', undefined, areas)).map((t) => t.name).sort()).toEqual([...CORE_TOOLSET].sort());
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
  });

  it('none given is default; default leaves keys out; all is every area; names combine and are case-insensitive', () => {
    expect(requestedAreas(undefined, undefined, areas)).toEqual(new Set(DEFAULT_TOOLSETS));
    expect(requestedAreas('', ' ', areas)).toEqual(new Set(DEFAULT_TOOLSETS));
    expect(requestedAreas('all', undefined, areas)).toEqual(new Set(areas));
    expect(requestedAreas('default', undefined, areas)).toEqual(new Set(DEFAULT_TOOLSETS));
    expect(requestedAreas('default', undefined, areas).has('keys')).toBe(false);
    expect(requestedAreas('Data, storage', 'keys', areas)).toEqual(new Set(['data', 'storage', 'keys']));
    // A name is its area alone; `default` adds to the default set.
    expect(requestedAreas('rag', undefined, areas)).toEqual(new Set(['rag']));
    expect(requestedAreas('default,rag', undefined, areas)).toEqual(new Set([...DEFAULT_TOOLSETS, 'rag']));
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
