/**
 * @module
 * Test helper: Debian's Chromium (`/usr/bin/chromium`) driven by playwright-core, headless, with a fresh
 * profile folder, and a page that records console errors, page errors and refused API calls (4xx/5xx),
 * so a test can assert the console made no call the API refused. Closed by `t.after`.
 * Chromium aborts every load in flight with `net::ERR_NETWORK_CHANGED` when the machine's network
 * interfaces change, which the isolation tests running beside do (network namespaces, veth pairs):
 * those failures are counted apart (`networkChanges`), not as the console's errors, and `openConsole`
 * loads the page again after one.
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
  /** Loads Chromium aborted as the machine's network interfaces changed. */
  networkChanges: number;
}

/** How Chromium names a load it aborted because a network interface of the machine changed. */
const NETWORK_CHANGED = 'net::ERR_NETWORK_CHANGED';

/** Most times `openConsole` loads the page again after network changes. */
const MAX_RELOADS = 5;

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
  const watched: WatchedPage = { page, context, errors: [], refused: [], networkChanges: 0 };
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().includes(NETWORK_CHANGED)) watched.errors.push(m.text());
  });
  page.on('requestfailed', (r) => {
    if (r.failure()?.errorText === NETWORK_CHANGED) watched.networkChanges++;
  });
  page.on('pageerror', (err) => watched.errors.push(err.message));
  page.on('response', (r) => {
    if (r.status() >= 400) watched.refused.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
  });
  return watched;
}

/** Resolves at the page's next load aborted by a network change (the listener goes with `done`). */
function nextNetworkChange(w: WatchedPage, done: Promise<unknown>): Promise<'changed'> {
  return new Promise((resolve) => {
    const on = (r: { failure(): { errorText: string } | null }) => {
      if (r.failure()?.errorText === NETWORK_CHANGED) resolve('changed');
    };
    w.page.on('requestfailed', on);
    const off = () => w.page.off('requestfailed', on);
    done.then(off, off);
  });
}

/**
 * Loads the console at `url` and waits for its sign-in form, loading it again (at most `MAX_RELOADS`
 * times) when a network change aborted its loads, before or during the wait. If it never shows, the
 * error carries what the page showed and the errors and refused calls it saw (the form waits on the
 * console's config; a failure there is otherwise only a timeout).
 */
export async function openConsole(w: WatchedPage, url: string): Promise<void> {
  for (let loads = 0; ; loads++) {
    const seen = w.networkChanges;
    try {
      await w.page.goto(url);
    } catch (err) {
      if (w.networkChanges === seen) throw err;
    }
    try {
      if (w.networkChanges === seen) {
        const shown = w.page.getByLabel('Memory API key').waitFor();
        if ((await Promise.race([shown.then(() => 'shown' as const), nextNetworkChange(w, shown)])) === 'shown') return;
        shown.catch(() => {}); // given up with the page it waited on
      }
    } catch (err) {
      const shown = await w.page
        .locator('body')
        .textContent({ timeout: 5_000 })
        .then(
          (text) => text ?? '',
          (e: Error) => `(no body text: ${e.message})`,
        );
      throw new Error(
        `the sign-in form did not show: ${(err as Error).message}\npage: ${shown.slice(0, 500)}\nerrors: ${JSON.stringify(w.errors)}\nrefused: ${JSON.stringify(w.refused)}\nnetwork changes: ${w.networkChanges}`,
      );
    }
    if (loads === MAX_RELOADS) throw new Error(`the sign-in form did not show: ${w.networkChanges} network changes`);
  }
}
