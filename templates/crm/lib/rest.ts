// The app's own REST routes called as the signed-in end user (their JWT forwarded): what ctx does not offer, such as
// their integrations' connect and connections routes. fetch() under SVC_API_URL is forwarded by the platform itself.
import type { Ctx } from './ctx.ts';
import { HttpError, requireUser } from './http.ts';

/** The route's JSON answer (null for 204); a refusal keeps the platform's status and code (5xx become 502). */
export async function asUser<T = any>(ctx: Ctx, method: string, route: string, body?: unknown): Promise<T> {
  requireUser(ctx);
  const headers: Record<string, string> = { authorization: `Bearer ${ctx.token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${ctx.env.SVC_API_URL}${route}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let parsed: any = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!res.ok) {
    const error = parsed?.error ?? {};
    const status = res.status >= 500 ? 502 : res.status;
    throw new HttpError(status, typeof error.code === 'string' ? error.code : 'platform_error', typeof error.message === 'string' ? error.message : `${method} ${route} answered ${res.status}.`);
  }
  return parsed as T;
}
