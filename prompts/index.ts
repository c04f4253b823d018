import { z } from 'zod';

export interface McpPrompt {
  name: string;
  description: string;
  args: z.ZodObject<Record<string, z.ZodType<string | undefined>>>;
  render: (args: Record<string, string | undefined>) => string;
}

/** MCP prompts: starting points an agent's user can pick. */
export const prompts: readonly McpPrompt[] = [
  {
    name: 'create_backend',
    description: 'Create a new app for a product idea and keep its service key safe.',
    args: z.object({ idea: z.string().describe('What the app is for') }),
    render: ({ idea }) =>
      `Create a backend app for: ${idea ?? 'my project'}.\n` +
      '1. Call apps_list to see whether a fitting app already exists.\n' +
      '2. Otherwise call apps_create with a short descriptive name.\n' +
      '3. The response holds service_key.key, shown only once: tell the user to store it as a secret (never in client-side code).\n' +
      '4. Read the svc://guide/llms.txt resource for what the app can do next.',
  },
];
