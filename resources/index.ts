import type { Services } from '../src/core/services.ts';

export interface McpResource {
  uri: string;
  name: string;
  description: string;
  mimeType: string;
  read: (services: Services) => string;
}

/** MCP resources: guidance an agent can pull into context without a tool call. */
export const resources: readonly McpResource[] = [
  {
    uri: 'svc://guide/llms.txt',
    name: 'Platform guide',
    description: 'What the platform offers, how credentials work, and every tool with its REST route (same text as GET /llms.txt).',
    mimeType: 'text/plain',
    read: (services) => services.docs.llmsTxt(),
  },
];
