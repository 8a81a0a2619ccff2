/**
 * @module
 * Test helper: Debian's Chromium (`/usr/bin/chromium`) driven by playwright-core, headless, with a fresh
 * profile folder, and a page that records console errors, page errors and refused API calls (4xx/5xx),
 * so a test can assert the console made no call the API refused. Closed by `t.after`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/** Where Debian's Chromium is (.ci/run installs the `chromium` package). */
export const CHROMIUM = '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--no-first-run',
  '--disable-quic',
  '--disable-component-update',
  '--disable-sync',
];

/** A page and what it reported. */
export interface WatchedPage {
  page: Page;
  context: BrowserContext;
  /** Console errors and uncaught page errors, as text. */
  errors: string[];
  /** API answers of 400 or more, as `status METHOD path`. */
  refused: string[];
}

/** Launches Chromium with a fresh profile; the browser and the folder go away after the test. */
export async function openBrowser(t: TestContext, viewport = { width: 1280, height: 800 }): Promise<WatchedPage> {
  const profile = await mkdtemp(join(tmpdir(), 'tether-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport,
    timezoneId: 'UTC',
    locale: 'en-GB',
  });
  t.after(async () => {
    await context.close();
    await rm(profile, { recursive: true, force: true });
  });
  // Every wait and action of the page waits up to 60 s (Playwright's default is 30 s): a bound on an event,
  // as the harness's waitFor, that a loaded machine does not reach.
  context.setDefaultTimeout(60_000);
  const page = context.pages()[0] ?? (await context.newPage());
  const watched: WatchedPage = { page, context, errors: [], refused: [] };
  page.on('console', (m) => {
    if (m.type() === 'error') watched.errors.push(m.text());
  });
  page.on('pageerror', (err) => watched.errors.push(err.message));
  page.on('response', (r) => {
    if (r.status() >= 400) watched.refused.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
  });
  return watched;
}

/**
 * Waits for the console's sign-in form. If it never shows, the error carries what the page showed and
 * the errors and refused calls it saw (the form waits on the console's config; a failure there is
 * otherwise only a timeout).
 */
export async function signInShown(w: WatchedPage): Promise<void> {
  try {
    await w.page.getByLabel('Memory API key').waitFor();
  } catch (err) {
    const shown = await w.page
      .locator('body')
      .textContent({ timeout: 5_000 })
      .then(
        (text) => text ?? '',
        (e: Error) => `(no body text: ${e.message})`,
      );
    throw new Error(
      `the sign-in form did not show: ${(err as Error).message}\npage: ${shown.slice(0, 500)}\nerrors: ${JSON.stringify(w.errors)}\nrefused: ${JSON.stringify(w.refused)}`,
    );
  }
}
