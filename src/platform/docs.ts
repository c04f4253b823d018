import type { AnyTool } from '../core/define.ts';
import { guidePath } from '../core/errors.ts';
import { inputJsonSchema, outputJsonSchema, pathParams, type JsonSchema } from '../core/schema.ts';
import { AREA_GUIDES } from './area-guides.ts';

export const INDEX_BEGIN = '<!-- areas:begin (generated from toolAreas in tools/index.ts by `npm run gen:llms`; do not edit) -->';
export const INDEX_END = '<!-- areas:end -->';

const AUTH_LABEL: Record<string, string> = {
  none: 'no credential',
  platform: 'platform key',
  service: 'service key',
  user: 'end-user JWT',
  substrate: 'substrate key',
};

type Areas = Readonly<Record<string, readonly AnyTool[]>>;

/** Where an area's section is served: the route, the guide tool's input and the MCP resource. */
export const areaLink = (area: string) => guidePath(area);
export const areaResource = (area: string) => `svc://guide/${area}`;

function describeField(name: string, schema: JsonSchema, required: boolean): string {
  const type = Array.isArray(schema.enum) ? (schema.enum as unknown[]).map((v) => JSON.stringify(v)).join(' | ') : String(schema.type ?? 'any');
  const extra = [required ? 'required' : 'optional'];
  if (schema.default !== undefined) extra.push(`default ${JSON.stringify(schema.default)}`);
  const description = typeof schema.description === 'string' ? `: ${schema.description}` : '';
  return `  - \`${name}\` (${type}, ${extra.join(', ')})${description}`;
}

/** One tool's reference: REST route, credentials, description and inputs, generated so it can never drift from the code. */
function renderTool(tool: AnyTool): string[] {
  const lines = [`### ${tool.name}: ${tool.title}`];
  lines.push(tool.http ? `REST: \`${tool.http.method} ${tool.http.path}\`` + (tool.http.subdomainPath ? ` (app host: \`${tool.http.subdomainPath}\`)` : '') : 'MCP only');
  lines.push(`Credentials: ${tool.auth.map((a) => AUTH_LABEL[a]).join(', ')}`);
  lines.push('', tool.description);
  const schema = inputJsonSchema(tool);
  const props = Object.entries(schema.properties ?? {});
  if (props.length) {
    lines.push('', 'Input:');
    for (const [name, prop] of props) lines.push(describeField(name, prop, schema.required?.includes(name) ?? false));
  }
  lines.push('');
  return lines;
}

/** What an area is for: its hand-written summary, else its tools' titles (an area registered without a guide yet). */
function summaryOf(area: string, tools: readonly AnyTool[]): string {
  return AREA_GUIDES[area]?.summary ?? `${tools.map((t) => t.title).join('; ')}.`;
}

/** The per-area index of /llms.txt: one line per area with what it is for, its tools and the link to its section. */
export function renderAreaIndex(areas: Areas): string {
  const lines = [INDEX_BEGIN, ''];
  for (const [area, tools] of Object.entries(areas)) {
    // The tools an agent can call; the area's REST-only routes (a person's sign-in, key minting) are in its section.
    const callable = tools.filter((t) => t.mcp !== false);
    lines.push(`- **${area}**: ${summaryOf(area, tools)} Tools: ${callable.map((t) => t.name).join(', ')}. Section: ${areaLink(area)}`);
  }
  lines.push('', INDEX_END);
  return lines.join('\n');
}

/** Replaces the generated index of the committed llms.txt text. */
export function withAreaIndex(llmsTxt: string, areas: Areas): string {
  const begin = llmsTxt.indexOf(INDEX_BEGIN);
  const end = llmsTxt.indexOf(INDEX_END);
  if (begin < 0 || end < begin) throw new Error('llms.txt lacks the area index markers');
  return llmsTxt.slice(0, begin) + renderAreaIndex(areas) + llmsTxt.slice(end + INDEX_END.length);
}

/**
 * An area's section of the guide: what it is for, its hand-written reference (limits, errors, rules), then every tool
 * unless `withTools` is false (an MCP agent already has the tools' texts from tools/list).
 */
export function renderAreaSection(area: string, tools: readonly AnyTool[], withTools = true): string {
  const guide = AREA_GUIDES[area];
  const lines = [
    `# svc platform: the ${area} area`,
    '',
    `> ${summaryOf(area, tools)}`,
    '',
    `This is the reference of one area (GET ${areaLink(area)}, platform_guide with area "${area}", MCP resource ` +
      `${areaResource(area)}). The short guide, with connecting, credentials, errors and the other areas: GET /llms.txt.`,
    '',
  ];
  if (guide?.reference) lines.push(guide.reference.trim(), '');
  if (!withTools) return lines.join('\n');
  lines.push('## Tools', '');
  for (const tool of tools) lines.push(...renderTool(tool));
  return lines.join('\n');
}

/** Where the manual keeps the generated reference: docs/reference/<area>.md and its index (scripts/gen-llms.ts writes them). */
export const REFERENCE_DIR = new URL('../../docs/reference/', import.meta.url);

/**
 * The manual's reference, one page per area: exactly the area's section agents read (GET /llms.txt?area=<area>), so
 * the two cannot disagree; and its index, each area with its summary and tools.
 */
export function renderReference(areas: Areas): Map<string, string> {
  const pages = new Map<string, string>();
  const index = ['# Reference', '', 'Every route and tool, by area: each page is the section agents read at /llms.txt?area=<area>, generated from the same descriptors.', ''];
  for (const [area, tools] of Object.entries(areas)) {
    pages.set(`${area}.md`, renderAreaSection(area, tools) + '\n');
    index.push(`- [${area}](${area}.md): ${summaryOf(area, tools)} Tools: ${tools.map((t) => `\`${t.name}\``).join(', ')}.`);
  }
  pages.set('index.md', index.join('\n') + '\n');
  return pages;
}

/** The texts of /llms.txt: the committed guide, and each area's section rendered from the registry once, at start-up. */
export interface Docs {
  llmsTxt(): string;
  /** The section of a registered area, without its tool reference when `tools` is false; undefined for any other name. */
  areaSection(area: string, opts?: { tools: boolean }): string | undefined;
}

export function createDocs(llmsTxt: string, areas: Areas): Docs {
  const render = (withTools: boolean) => new Map(Object.entries(areas).map(([area, tools]) => [area, renderAreaSection(area, tools, withTools)]));
  const sections = render(true);
  const notes = render(false);
  return { llmsTxt: () => llmsTxt, areaSection: (area, opts) => (opts?.tools === false ? notes : sections).get(area) };
}

const ERROR_RESPONSE = { $ref: '#/components/responses/Error' };

/** OpenAPI 3.1 document of every REST route, generated from the same descriptors MCP serves. */
export function buildOpenApi(tools: readonly AnyTool[], baseUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const tool of tools) {
    if (!tool.http) continue;
    const { method, path, status = 200, contentType, headers = {}, bodyField, queryField } = tool.http;
    const schema = inputJsonSchema(tool);
    const props = schema.properties ?? {};
    const isRequired = (name: string) => schema.required?.includes(name) ?? false;
    const inPath = pathParams(path);
    const headerOf = Object.fromEntries(Object.entries(headers).map(([header, field]) => [field, header]));
    const special = new Set([...inPath, ...Object.keys(headerOf), ...(bodyField ? [bodyField] : []), ...(queryField ? [queryField] : [])]);
    const rest = Object.entries(props).filter(([name]) => !special.has(name));
    const restInBody = method !== 'GET' && method !== 'DELETE' && !bodyField;
    const parameters = [
      ...inPath.map((name) => ({ name, in: 'path', required: true, schema: props[name] ?? { type: 'string' } })),
      ...Object.entries(headerOf).map(([field, header]) => ({ name: header, in: 'header', required: isRequired(field), schema: props[field] })),
      // With queryField the whole query string is data, so the remaining fields are MCP-only.
      ...(restInBody || queryField ? [] : rest.map(([name, prop]) => ({ name, in: 'query', required: isRequired(name), schema: prop }))),
    ];
    const requestBody = bodyField
      ? { required: isRequired(bodyField), content: { 'application/json': { schema: props[bodyField] ?? {} } } }
      : restInBody && rest.length
        ? { required: true, content: { 'application/json': { schema: { ...schema, properties: Object.fromEntries(rest), required: (schema.required ?? []).filter((n) => !special.has(n)) } } } }
        : undefined;
    const success =
      status === 204
        ? { description: 'No content' }
        : {
            description: 'Success',
            content: contentType
              ? { [contentType.split(';')[0]!]: { schema: { type: 'string' } } }
              : { 'application/json': { schema: outputJsonSchema(tool) } },
          };
    paths[path] ??= {};
    paths[path][method.toLowerCase()] = {
      operationId: tool.name,
      summary: tool.title,
      description: tool.description,
      'x-mcp-tool': tool.name,
      security: tool.auth.includes('none') ? [{}, { bearer: [] }] : [{ bearer: [] }],
      parameters,
      ...(requestBody ? { requestBody } : {}),
      ...(queryField ? { 'x-query-string': `the whole query string is the ${queryField} input (PostgREST syntax)` } : {}),
      responses: { [String(status)]: success, '400': ERROR_RESPONSE, '401': ERROR_RESPONSE, '403': ERROR_RESPONSE, '404': ERROR_RESPONSE },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'svc platform API', version: '0.1.0', description: 'Every operation is also an MCP tool on /mcp (see x-mcp-tool).' },
    servers: [{ url: baseUrl }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'svc_pk_ platform key, svc_sk_ service key, svc_sub_ substrate key, or an end-user JWT' } },
      responses: {
        Error: {
          description: 'Standard error envelope',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['error'],
                properties: {
                  error: {
                    type: 'object',
                    required: ['code', 'message', 'remediation'],
                    properties: {
                      code: { type: 'string' },
                      message: { type: 'string' },
                      remediation: { type: 'string' },
                      documentation_url: { type: 'string', format: 'uri', description: "The guide section of the error's area (/llms.txt?area=<area>), or the guide" },
                      details: {},
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
  };
}
