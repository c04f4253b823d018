// Shared set-up of the function tests: an app to deploy into, deploying a function, invoking one over HTTP.
import { expect } from 'vitest';
import type { TestPlatform } from './platform.ts';

/** The body of POST /init: an app and its service key. */
export type App = { app_id: string; service_key: { key: string } };

/** Creates an app through POST /init; `appId` and `key` are its id and service key. */
export async function createApp(p: TestPlatform, name: string): Promise<{ app: App; appId: string; key: string }> {
  const app: App = (await p.api('POST', '/init', { body: { name } })).body;
  return { app, appId: app.app_id, key: app.service_key.key };
}

/** POST /v1/:app/functions with `key`, the response as it comes. */
export function deployFunction(p: TestPlatform, appId: string, key: string | null, body: Record<string, unknown>) {
  return p.api('POST', `/v1/${appId}/functions`, { key, body });
}

/** Deploys a new function and expects 201 (the response body in the failure message); returns the function's id. */
export async function deployNew(p: TestPlatform, appId: string, key: string, body: Record<string, unknown>): Promise<string> {
  const r = await deployFunction(p, appId, key, body);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id;
}

/** A response's text and its JSON (undefined where the text is not JSON). */
export async function readText(res: Response): Promise<{ text: string; json: any }> {
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { text, json };
}

/** fetch of `/v1/:app/fn/<path>` on the platform; `path` is the function's name with anything after it. */
export function fetchFunction(p: TestPlatform, appId: string, path: string, init?: RequestInit): Promise<Response> {
  return fetch(`${p.url}/v1/${appId}/fn/${path}`, init);
}

/** GET /v1/:app/functions/:name/logs<query> with `key`, expecting 200; returns the log rows. */
export async function functionLogs<T = any>(p: TestPlatform, appId: string, key: string, name: string, query = ''): Promise<T[]> {
  const r = await p.api('GET', `/v1/${appId}/functions/${name}/logs${query}`, { key });
  expect(r.status).toBe(200);
  return r.body.logs as T[];
}
