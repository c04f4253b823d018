import { z } from 'zod';
import { type AnyTool } from '../../src/core/define.ts';
import { toolsUsing } from '../define.ts';
import { errors } from '../../src/core/errors.ts';
import { SuggestionInput } from '../../src/platform/suggestions.ts';
import { accountOf } from '../caller.ts';
import { QueryFlag } from '../shared.ts';

type Uses = 'docs' | 'health' | 'suggestions';
const defineTool = toolsUsing<Uses>();

export const platformHealth = defineTool({
  name: 'platform_health',
  title: 'Liveness',
  description: 'Liveness check: answers { status: "ok" } while the process serves requests. Needs no credential.',
  input: z.object({}),
  output: z.object({ status: z.literal('ok'), uptime_seconds: z.number() }),
  auth: ['none', 'platform', 'service', 'user', 'substrate'],
  http: { method: 'GET', path: '/health' },
  annotations: { readOnlyHint: true },
  handler: async (_input, ctx) => ctx.services.health.live(),
});

export const platformReady = defineTool({
  name: 'platform_ready',
  title: 'Readiness',
  description: 'Readiness check: { status: "ready" } when the control database answers; 503 SERVICE_UNAVAILABLE otherwise.',
  input: z.object({}),
  output: z.object({ status: z.literal('ready'), database: z.literal('ok'), latency_ms: z.number() }),
  auth: ['none', 'platform', 'service', 'user', 'substrate'],
  http: { method: 'GET', path: '/health/ready' },
  annotations: { readOnlyHint: true },
  handler: async (_input, ctx) => ctx.services.health.ready(),
});

/** The guide tool; its `area` input enumerates the areas of tools/index.ts, which builds it (it is in one of them). */
export function platformGuideTool(areas: readonly string[]): AnyTool {
  return defineTool({
    name: 'platform_guide',
    title: 'Agent guide',
    description:
      'The platform guide (GET /llms.txt): connecting, credentials, errors, the flow, conventions, pitfalls, the index of the areas. ' +
      "With area: that area's reference, its rules and every tool (GET /llms.txt?area=<area>); tools: false leaves out the tools " +
      'tools/list already gave you.',
    input: z.object({
      area: z.enum(areas as [string, ...string[]]).optional().describe("An area's reference instead of the guide"),
      tools: QueryFlag.optional().describe("With area: false leaves out the area's tool reference"),
    }),
    output: z.object({ text: z.string() }),
    auth: ['none', 'platform', 'service', 'user', 'substrate'],
    http: { method: 'GET', path: '/llms.txt', contentType: 'text/plain; charset=utf-8', respond: (out) => ({ body: out.text }) },
    annotations: { readOnlyHint: true },
    handler: async (input, ctx) => {
      if (!input.area) return { text: ctx.services.docs.llmsTxt() };
      const text = ctx.services.docs.areaSection(input.area, { tools: input.tools ?? true });
      if (text === undefined) throw errors.notFound(`Area '${input.area}'`, 'Call platform_guide without area for the index of the areas.');
      return { text };
    },
  });
}

export const suggestionsCreate = defineTool({
  name: 'suggestions_create',
  title: 'Send a suggestion',
  description:
    'Report a bug, request a feature, or suggest an improvement to the platform or its docs. Agents: set source to "agent" and ' +
    'name the tool in affected_tool. Returns { id, status: "received", created_at }.',
  input: SuggestionInput,
  output: z.object({ id: z.string(), status: z.literal('received'), created_at: z.string() }),
  // Every member may report a problem.
  role: 'viewer',
  auth: ['platform'],
  http: { method: 'POST', path: '/suggestions', status: 201 },
  handler: async (input, ctx) => ctx.services.suggestions.create(accountOf(ctx.caller), input),
});
