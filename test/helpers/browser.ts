import path from 'node:path';
import { build } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';
import { request, type RawResponse } from '../e2e/e2e-helpers.ts';
import { waitFor } from '../integration/frontend-helpers.ts';
import { spawnServer, type SpawnedServer } from './server.ts';

/**
 * Debian's Chromium, headless, with a fresh temporary profile (Playwright's) and no background traffic of its own;
 * `hosts` are host names it resolves to 127.0.0.1 (a platform on a host name of its own, as in production).
 */
export function launchChromium(hosts: readonly string[] = []): Promise<Browser> {
  const rules = hosts.map((h) => `MAP ${h} 127.0.0.1`).join(', ');
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...(rules ? [`--host-resolver-rules=${rules}`] : []),
    ],
  });
}

/** supabase-js for the browser, one ES module, bundled from node_modules with esbuild as a site's build would. */
export async function supabaseBundle(): Promise<string> {
  const result = await build({
    stdin: { contents: "export { createClient } from '@supabase/supabase-js'", resolveDir: path.resolve(import.meta.dirname, '../..') },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
  });
  // build() rejects on errors; one entry and no splitting make one output file.
  return result.outputFiles[0]!.text;
}

/** A platform spawned as `npm start` starts it, an app made by POST /init, and Chromium: a browser test's start. */
export interface AppSiteHarness {
  server: SpawnedServer;
  browser: Browser;
  appId: string;
  serviceKey: string;
  publishableKey: string;
  /** The app's own host, where its site is served: http://{subdomain}.localhost:<port>/. */
  site: string;
  close(): Promise<void>;
}

export async function startAppSite(name: string): Promise<AppSiteHarness> {
  const server = await spawnServer();
  const init = await request(server.url, '/init', { method: 'POST', key: server.platformKey, body: { name } });
  if (init.status !== 201) {
    await server.close();
    throw new Error(`init: ${init.status} ${init.text}`);
  }
  const browser = await launchChromium();
  return {
    server,
    browser,
    appId: init.json.app_id,
    serviceKey: init.json.service_key.key,
    publishableKey: init.json.publishable_key,
    site: `http://${init.json.subdomain}.localhost:${server.port}/`,
    async close() {
      await browser.close();
      await server.close();
    },
  };
}

/**
 * Deploys a static site of `files` to the app (the deployment route an agent uses) and waits for its build to end;
 * resolves with the deploy call's response and the finished deployment.
 */
export async function deployStaticSite(
  baseUrl: string,
  appId: string,
  serviceKey: string,
  files: Record<string, string>,
): Promise<{ deployed: RawResponse; deployment: Record<string, unknown> }> {
  const deployed = await request(baseUrl, `/v1/${appId}/frontend/deployments/files`, { method: 'POST', key: serviceKey, body: { framework: 'static', files } });
  if (deployed.status !== 202) return { deployed, deployment: {} };
  const deployment = await waitFor(async () => {
    const d = (await request(baseUrl, `/v1/${appId}/frontend/deployments/${deployed.json.id}`, { key: serviceKey })).json;
    return d.status === 'BUILDING' ? undefined : d;
  }, 20_000);
  return { deployed, deployment };
}
