import { chromium, type Browser } from 'playwright-core';

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
