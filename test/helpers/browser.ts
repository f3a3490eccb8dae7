// Real headless Chromium (Debian's /usr/bin/chromium) driven by playwright-core, for the web app tests.
// One launch per test file; a fresh profile directory each time. Every console error and page error is
// recorded so a test can fail on it; a request the test expects to fail (a 4xx shown to the user) is
// declared first with expectFailedRequest, so its "Failed to load resource" line is not an error.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.TRIBUNAL_CHROMIUM ?? '/usr/bin/chromium';
export const ARTIFACTS = path.resolve('test-results', 'web');

export const LAPTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

export interface BrowserRig {
  context: BrowserContext;
  page: Page;
  /** Console errors and uncaught page errors seen so far (expected failed requests excluded). */
  errors: string[];
  /** The next console "Failed to load resource" error for a URL containing `urlPart` with this status is expected. */
  expectFailedRequest(urlPart: string, status: number): void;
  /** Saves a full-page screenshot as test-results/web/<name>.png and returns its path. */
  screenshot(name: string): Promise<string>;
  close(): Promise<void>;
}

export function chromiumAvailable(): boolean {
  return fs.existsSync(CHROMIUM);
}

export async function launchBrowser(): Promise<BrowserRig> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'tribunal-chromium-'));
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  // Playwright manages --user-data-dir itself through launchPersistentContext: a fresh directory here.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: LAPTOP,
    locale: 'en-US',
    timezoneId: 'UTC',
    colorScheme: 'light',
  });
  context.setDefaultTimeout(10_000);
  const errors: string[] = [];
  const expected: Array<{ urlPart: string; status: number }> = [];
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    const text = msg.text();
    const url = msg.location().url ?? '';
    const failed = /Failed to load resource: the server responded with a status of (\d+)/.exec(text);
    if (failed) {
      const at = expected.findIndex((e) => url.includes(e.urlPart) && e.status === Number(failed[1]));
      if (at >= 0) {
        expected.splice(at, 1);
        return;
      }
    }
    errors.push(`console error: ${text}${url ? ` (${url})` : ''}`);
  });
  page.on('pageerror', (err) => errors.push(`page error: ${err.message}`));
  return {
    context,
    page,
    errors,
    expectFailedRequest(urlPart, status) {
      expected.push({ urlPart, status });
    },
    async screenshot(name) {
      const file = path.join(ARTIFACTS, `${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      return file;
    },
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}
