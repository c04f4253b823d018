import type { Services } from '../src/services.ts';
import { AREA_GUIDES } from '../src/platform/area-guides.ts';
import { areaLink, areaResource } from '../src/platform/docs.ts';
import { toolAreas } from '../tools/index.ts';

export interface McpResource {
  uri: string;
  name: string;
  description: string;
  mimeType: string;
  read: (services: Services) => string;
}

/** MCP resources: guidance an agent can pull into context without a tool call: the guide, then each area's section. */
export const resources: readonly McpResource[] = [
  {
    uri: 'svc://guide/llms.txt',
    name: 'Platform guide',
    description: 'Connecting, credentials, errors, the flow for a new app, conventions, pitfalls and an index of the areas (same text as GET /llms.txt).',
    mimeType: 'text/plain',
    read: (services) => services.docs.llmsTxt(),
  },
  ...Object.keys(toolAreas).map((area) => ({
    uri: areaResource(area),
    name: `Guide: ${area}`,
    description: `${AREA_GUIDES[area]?.summary ?? `The ${area} area.`} Its tools with inputs, limits and errors (same text as GET ${areaLink(area)}).`,
    mimeType: 'text/plain',
    read: (services: Services) => services.docs.areaSection(area) ?? '',
  })),
  // The same sections without the tool reference a session's tools/list already holds: what an agent that has the
  // area's tools reads, at a fraction of the bytes.
  ...Object.keys(toolAreas).map((area) => ({
    uri: `${areaResource(area)}/notes`,
    name: `Guide: ${area}, without its tools`,
    description: `The ${area} guide without the tool reference tools/list gives (platform_guide with tools: false).`,
    mimeType: 'text/plain',
    read: (services: Services) => services.docs.areaSection(area, { tools: false }) ?? '',
  })),
];
