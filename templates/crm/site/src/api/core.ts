// Calling the CRM: its functions at {SVC_API_URL}/fn/{name} with the end user's token, and the data API through
// supabase-js (row-level security shows the caller their workspaces' rows only).
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import { env } from '../env.ts';
import { accessToken } from '../session.ts';
import { ApiError, errorOf } from './errors.ts';

type Query = Record<string, string | number | boolean | null | undefined>;

export interface Call {
  method?: 'GET' | 'POST';
  query?: Query;
  body?: unknown;
  signal?: AbortSignal;
}

function fnUrl(name: string, query: Query = {}): string {
  const url = new URL(`${env.SVC_API_URL}/fn/${name}`);
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) url.searchParams.set(k, String(v));
  return url.toString();
}

async function call(name: string, { method = 'POST', query, body, signal }: Call, accept: string): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${await accessToken()}`, accept };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(fnUrl(name, query), { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
  if (!res.ok) throw errorOf(res.status, await res.json().catch(() => null));
  return res;
}

/** A CRM function's JSON answer; a refusal throws its { code, message }. */
export async function fn<T>(name: string, opts: Call = {}): Promise<T> {
  const res = await call(name, opts, 'application/json');
  return (res.status === 204 ? null : await res.json()) as T;
}

/** A CRM function's answer as text (an export). */
export async function fnText(name: string, opts: Call = {}): Promise<string> {
  return (await call(name, opts, 'text/csv, text/plain, */*')).text();
}

export interface SseEvent {
  event: string;
  data: string;
}

/** A function answering with server-sent events: each event is passed on as it arrives. */
export async function fnStream(name: string, opts: Call, onEvent: (e: SseEvent) => void): Promise<void> {
  const res = await call(name, opts, 'text/event-stream');
  if (!res.body) throw new ApiError(502, 'no_stream', 'The answer had no body.');
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replaceAll('\r\n', '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const parsed = parseEvent(block);
      if (parsed) onEvent(parsed);
    }
  }
  const last = parseEvent(buffer);
  if (last) onEvent(last);
}

function parseEvent(block: string): SseEvent | null {
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('event:')) event = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  return data.length ? { event, data: data.join('\n') } : null;
}

let client: { token: string; db: SupabaseClient } | null = null;

/** supabase-js as the signed-in end user (made again when the token is refreshed). */
export async function db(): Promise<SupabaseClient> {
  const token = await accessToken();
  if (client?.token !== token) {
    client = { token, db: createClient(env.SVC_DATA_URL, token, { auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false } }) };
  }
  return client.db;
}

/** The rows of a data API answer, or its error thrown. */
export function rows<T>(result: { data: unknown; error: { message: string; code?: string } | null; status?: number }): T[] {
  if (result.error) throw new ApiError(result.status ?? 400, result.error.code ?? 'data_error', result.error.message);
  return (result.data ?? []) as T[];
}
