import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { toolAreas, tools } from '../../tools/index.ts';
import { areaLink, buildOpenApi, INDEX_BEGIN, INDEX_END, REFERENCE_DIR, renderAreaSection, renderReference, withAreaIndex } from '../../src/platform/docs.ts';
import { LLMS_TXT_PATH } from '../../src/composition.ts';
import { inputJsonSchema, outputJsonSchema } from '../../src/core/schema.ts';

describe('generated documentation', () => {
  it('the committed llms.txt matches the registry (run `npm run gen:llms` after changing the areas or their tools)', () => {
    const committed = readFileSync(LLMS_TXT_PATH, 'utf8');
    expect(withAreaIndex(committed, toolAreas)).toBe(committed);
  });

  it('the committed reference (docs/reference/) matches the registry: every area a page, every tool and route in it (`npm run gen:llms`)', () => {
    const pages = renderReference(toolAreas);
    expect(readdirSync(REFERENCE_DIR).sort()).toEqual([...pages.keys()].sort());
    for (const [file, text] of pages) expect(readFileSync(new URL(file, REFERENCE_DIR), 'utf8'), file).toBe(text);
    for (const [area, list] of Object.entries(toolAreas)) {
      const page = pages.get(`${area}.md`)!;
      for (const t of list) {
        expect(page, t.name).toContain(`### ${t.name}: ${t.title}`);
        if (t.http) expect(page, t.name).toContain(`REST: \`${t.http.method} ${t.http.path}\``);
      }
    }
  });

  it('the index of llms.txt has a line per area with its tools and section link; a section documents every tool of its area', () => {
    const committed = readFileSync(LLMS_TXT_PATH, 'utf8');
    for (const [area, list] of Object.entries(toolAreas)) {
      const line = committed.split('\n').find((l) => l.startsWith(`- **${area}**: `));
      expect(line, area).toBeDefined();
      expect(line).toContain(`Tools: ${list.filter((t) => t.mcp !== false).map((t) => t.name).join(', ')}. Section: ${areaLink(area)}`);
      const section = renderAreaSection(area, list);
      for (const t of list) expect(section, `${area}: ${t.name}`).toContain(`### ${t.name}: ${t.title}`);
      for (const t of tools.filter((t) => !list.includes(t))) expect(section, `${area}: ${t.name}`).not.toContain(`### ${t.name}:`);
    }
  });

  it('an area registered without a hand-written guide still gets its index line and section, from its tools', () => {
    const [tool] = toolAreas.platform!;
    const index = withAreaIndex(`${INDEX_BEGIN}\n${INDEX_END}`, { zeta: [tool!] });
    expect(index).toContain(`- **zeta**: ${tool!.title}. Tools: ${tool!.name}. Section: /llms.txt?area=zeta`);
    expect(renderAreaSection('zeta', [tool!])).toContain(`### ${tool!.name}: ${tool!.title}`);
  });

  it('tool names are unique, snake_case and described', () => {
    const names = tools.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    for (const t of tools) {
      expect(t.name).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)+$/);
      expect(t.description.length).toBeGreaterThan(40);
    }
  });

  it('REST routes are unique and every path param is an input field', () => {
    const routes = tools.filter((t) => t.http).map((t) => t.http && `${t.http.method} ${t.http.path}`);
    expect(new Set(routes).size).toBe(routes.length);
    for (const t of tools) {
      if (!t.http) continue;
      const props = Object.keys(inputJsonSchema(t).properties ?? {});
      for (const [, param] of t.http.path.matchAll(/\{([a-z_]+)\}/g)) expect(props).toContain(param);
    }
  });

  it('MCP schemas are objects', () => {
    for (const t of tools) {
      expect(inputJsonSchema(t).type).toBe('object');
      expect(outputJsonSchema(t).type).toBe('object');
    }
  });

  it('openapi.json has an operation per HTTP tool', () => {
    const doc = buildOpenApi(tools, 'http://localhost:8080') as { paths: Record<string, Record<string, { operationId: string }>> };
    const ops = Object.values(doc.paths).flatMap((p) => Object.values(p).map((o) => o.operationId));
    expect(ops.sort()).toEqual(tools.filter((t) => t.http).map((t) => t.name).sort());
    expect(doc.paths['/apps/{app_id}']!.delete!.operationId).toBe('apps_delete');
  });
});
