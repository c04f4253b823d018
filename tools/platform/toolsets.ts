import { z } from 'zod';
import { AppError } from '../../src/core/errors.ts';
import { toolsUsing } from '../define.ts';

const defineTool = toolsUsing<never>();

/**
 * Grows the calling MCP session by more toolsets, so an agent that finds it needs, say, RAG keeps its session (and
 * what it learned) instead of opening another. MCP only: a REST request has no session whose tools could change.
 */
export const platformToolsetsEnable = defineTool({
  name: 'platform_toolsets_enable',
  title: 'Add toolsets to this session',
  description:
    'Adds toolsets (areas as named in the initialize instructions and the guide\'s index, or "all") to this MCP session; the client ' +
    'gets notifications/tools/list_changed and tools/list then lists their tools. Returns { toolsets, added, tools }: the session\'s, the newly added, their tools.',
  input: z.object({
    // No length limit on a name: an unknown one is refused by name (cut to 50 characters) before anything else.
    toolsets: z.array(z.string()).min(1).max(50).describe('e.g. ["rag"]'),
  }),
  output: z.object({ toolsets: z.array(z.string()), added: z.array(z.string()), tools: z.array(z.string()) }),
  // Choosing which tools one's own session lists reads nothing and changes nothing of the account.
  role: 'viewer',
  auth: ['platform'],
  http: false,
  annotations: { idempotentHint: true },
  handler: async (input, ctx) => {
    if (!ctx.toolsets) {
      throw new AppError(
        400,
        'VALIDATION_FAILED',
        'This call has no MCP session to add toolsets to (REST, or MCP 2026-07-28, which has no sessions).',
        'On MCP 2026-07-28 name the toolsets on every request: /mcp?toolsets=<names> or the Mcp-Toolsets header; on 2025-11-25 call this in a session.',
      );
    }
    return ctx.toolsets.enable(input.toolsets);
  },
});
