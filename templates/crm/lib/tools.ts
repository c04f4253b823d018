// Composio tools (mail, calendar, social) run through a member's own connected account. A function called by that
// member runs the tool as the caller; a cron or another member's action names the member with { userId }, which the
// platform only allows without an end user (see the functions guide), so the two cases are told apart here.
import type { Ctx } from './ctx.ts';

/** The tool's `data` for `userId`: as the caller when that is who called, else in their name. */
export async function runTool(ctx: Ctx, userId: string, slug: string, params: Record<string, unknown>): Promise<any> {
  const result = ctx.user?.id === userId ? await ctx.integrations.execute(slug, params) : await ctx.integrations.execute(slug, params, { userId });
  // Composio wraps some tools' output in response_data / response_dict; callers read the tool's own fields.
  const data = result.data ?? {};
  return data.response_data ?? data.response_dict ?? data;
}

/** A failure's message for a row's error column (the platform's code kept in front). */
export function errorText(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  const message = typeof e?.message === 'string' ? e.message : String(err);
  return (typeof e?.code === 'string' ? `${e.code}: ${message}` : message).slice(0, 1000);
}

