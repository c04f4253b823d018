import type { AnyTool } from '../core/define.ts';
import { inputJsonSchema, outputJsonSchema, pathParams, type JsonSchema } from '../core/schema.ts';

export const TOOLS_BEGIN = '<!-- tools:begin (generated from the registry by `npm run gen:llms`; do not edit) -->';
export const TOOLS_END = '<!-- tools:end -->';

const AUTH_LABEL: Record<string, string> = {
  none: 'no credential',
  platform: 'platform key',
  service: 'service key',
  user: 'end-user JWT',
  substrate: 'substrate key',
};

function describeField(name: string, schema: JsonSchema, required: boolean): string {
  const type = Array.isArray(schema.enum) ? (schema.enum as unknown[]).map((v) => JSON.stringify(v)).join(' | ') : String(schema.type ?? 'any');
  const extra = [required ? 'required' : 'optional'];
  if (schema.default !== undefined) extra.push(`default ${JSON.stringify(schema.default)}`);
  const description = typeof schema.description === 'string' ? `: ${schema.description}` : '';
  return `  - \`${name}\` (${type}, ${extra.join(', ')})${description}`;
}

/** The tool section of /llms.txt, generated so it can never drift from the code. */
export function renderToolSection(tools: readonly AnyTool[]): string {
  const lines: string[] = [TOOLS_BEGIN, '', '## Tools', ''];
  for (const tool of tools) {
    lines.push(`### ${tool.name}: ${tool.title}`);
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
  }
  lines.push(TOOLS_END);
  return lines.join('\n');
}

/** Replaces the generated section of the committed llms.txt text. */
export function withToolSection(llmsTxt: string, tools: readonly AnyTool[]): string {
  const begin = llmsTxt.indexOf(TOOLS_BEGIN);
  const end = llmsTxt.indexOf(TOOLS_END);
  if (begin < 0 || end < begin) throw new Error('llms.txt lacks the tools markers');
  return llmsTxt.slice(0, begin) + renderToolSection(tools) + llmsTxt.slice(end + TOOLS_END.length);
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
                    properties: { code: { type: 'string' }, message: { type: 'string' }, remediation: { type: 'string' }, details: {} },
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
