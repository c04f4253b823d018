// The requests a function receives from each trigger besides its public route: functions_invoke (test), a cron
// slot and a websocket message. Built here so the service only runs and records them.
import type { InvocationRecord } from './logs.ts';
import type { EndUser } from './protocol.ts';

export interface InvocationInput {
  trigger: InvocationRecord['trigger'];
  method: string;
  /** The path after the function name ('/' when empty), still percent-encoded. */
  path: string;
  /** '' or '?...' */
  search: string;
  /** Scheme and host of request.url as the function sees it. */
  origin: string;
  headers: Array<[string, string]>;
  body: Buffer | null;
  user: EndUser | null;
  token: string | null;
  signal?: AbortSignal;
}

export interface TestInvokeInput {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: unknown;
  user: EndUser | null;
  token: string | null;
}

/**
 * functions_invoke's request: query merged into the path, a non-string body sent as JSON (with its content type
 * unless one is given), and the end user's token as Authorization unless one is given.
 */
export function testRequest(input: TestInvokeInput, origin: string): InvocationInput {
  const url = new URL(input.path.startsWith('/') ? input.path : `/${input.path}`, 'http://function.invalid');
  for (const [k, v] of Object.entries(input.query)) url.searchParams.append(k, v);
  const headers = Object.entries(input.headers).map(([k, v]) => [k.toLowerCase(), v] as [string, string]);
  let body: Buffer | null = null;
  if (input.body !== undefined && input.body !== null && input.method !== 'GET' && input.method !== 'HEAD') {
    if (typeof input.body === 'string') {
      body = Buffer.from(input.body, 'utf8');
    } else {
      body = Buffer.from(JSON.stringify(input.body), 'utf8');
      if (!headers.some(([k]) => k === 'content-type')) headers.push(['content-type', 'application/json']);
    }
  }
  if (input.user && !headers.some(([k]) => k === 'authorization')) headers.push(['authorization', `Bearer ${input.token}`]);
  return {
    trigger: 'test',
    method: input.method,
    path: url.pathname,
    search: url.search,
    origin,
    headers,
    body,
    user: input.user,
    token: input.token,
  };
}

/** One scheduled slot: a POST with JSON { scheduled_at } and the trigger headers, as no user. */
export function cronRequest(scheduledAt: string, origin: string): InvocationInput {
  return {
    trigger: 'cron',
    method: 'POST',
    path: '/',
    search: '',
    origin,
    headers: [
      ['content-type', 'application/json'],
      ['x-svc-trigger', 'cron'],
      ['x-svc-scheduled-at', scheduledAt],
    ],
    body: Buffer.from(JSON.stringify({ scheduled_at: scheduledAt })),
    user: null,
    token: null,
  };
}

/** One websocket message: a POST with JSON { event, data }, carrying the connection's end-user token when it has one. */
export function websocketRequest(event: string, data: unknown, user: EndUser | null, token: string | null, origin: string, signal?: AbortSignal): InvocationInput {
  return {
    trigger: 'websocket',
    method: 'POST',
    path: '/',
    search: '',
    origin,
    headers: [
      ['content-type', 'application/json'],
      ['x-svc-trigger', 'websocket'],
      ['x-svc-event', event],
      ...(token ? [['authorization', `Bearer ${token}`] as [string, string]] : []),
    ],
    body: Buffer.from(JSON.stringify({ event, data: data ?? null })),
    user,
    token,
    ...(signal ? { signal } : {}),
  };
}
