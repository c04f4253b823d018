import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { tools } from '../../tools/index.ts';
import { buildOpenApi, withToolSection } from '../../src/platform/docs.ts';
import { LLMS_TXT_PATH } from '../../src/platform.ts';
import { inputJsonSchema, outputJsonSchema } from '../../src/core/schema.ts';

describe('generated documentation', () => {
  it('the committed llms.txt matches the registry (run `npm run gen:llms` after changing a tool)', () => {
    const committed = readFileSync(LLMS_TXT_PATH, 'utf8');
    expect(withToolSection(committed, tools)).toBe(committed);
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
