import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium, headless, with a fresh temporary profile (Playwright's) and no background traffic of its own. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
