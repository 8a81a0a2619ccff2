import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Locator } from 'playwright-core';
import { localPlatformDrivers } from '../../src/cli/drivers.ts';
import { silentLogger } from '../../src/common/log.ts';
import { starterRegistry } from '../../src/memory/registry.ts';
import { type LocalPlatform, startLocalPlatform } from '../../src/up/platform.ts';
import { send, serviceYaml } from '../gateway/helpers/harness.ts';
import { openBrowser, openConsole } from './browser.ts';

// Screenshots for docs/cli.md are written when this names a folder (TETHER_SCREENSHOTS=docs).
const SHOTS = process.env.TETHER_SCREENSHOTS;
const HOST = 'hello.default.example.com';

let home: string;
let dir: string;
let platform: LocalPlatform;
let adminKey: string;
let token: string;
const url = () => platform.memory.url;
/** A locator's text (textContent; the rendered layout does not matter to these checks). */
const textOf = async (l: Locator) => (await l.textContent()) ?? '';

async function api(
  path: string,
  key: string,
  body?: unknown,
  { method, epoch }: { method?: string; epoch?: number } = {},
): Promise<{ status: number; json: any }> {
  const res = await fetch(`${url()}${path}`, {
    method: method ?? (body === undefined ? 'GET' : 'POST'),
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(epoch === undefined ? {} : { 'x-lease-epoch': String(epoch) }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: res.status === 204 ? null : await res.json() };
}

before(async () => {
  // The manifest's folder (its service's workingDir, holding the data folder) in a 0700 home, as a checkout is.
  home = await mkdtemp(join(tmpdir(), 'tether-console-'));
  dir = join(home, 'checkout');
  await mkdir(dir, { mode: 0o755 });
  const manifest = join(dir, 'hello.yaml');
  await writeFile(
    manifest,
    serviceYaml('hello', {
      'serving.knative.dev/session-affinity-cookie': 'app',
      'serving.knative.dev/session-timeout': '30m',
      'autoscaling.knative.dev/target': '1',
    }),
  );
  platform = await startLocalPlatform({
    dataDir: join(dir, 'data'),
    services: [manifest],
    memoryPort: 0,
    gatewayPort: 0,
    adminPort: 0,
    defaultRegistry: starterRegistry('personal'),
    drivers: localPlatformDrivers({ graceMs: 500 }),
    log: silentLogger(),
  });
  adminKey = readFileSync(platform.memory.adminKeyFile as string, 'utf8').trim();
  const tokenFile = join(dir, 'data', 'gateway', 'admin.token');
  token = existsSync(tokenFile) ? readFileSync(tokenFile, 'utf8').trim() : '';
  // One agent with a fact that changed: blue an hour ago, green now.
  const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
  const ns = 'default:run-1';
  for (const [value, at] of [
    ['blue', hourAgo],
    ['green', undefined],
  ] as const) {
    const r = await api('/v1/memories', adminKey, {
      namespace: ns,
      subject: 'user',
      predicate: 'favorite_color',
      value,
      observed_at: at,
    });
    assert.equal(r.status, 200, JSON.stringify(r.json));
  }
  assert.equal((await api('/v1/keys', adminKey, { tenant: 'default', agent: 'run-1' })).status, 201);
  // Its resume records: a lease held by a pod, a working state, a turn, a pointer.
  const lease = await api('/v1/lease/acquire', adminKey, { namespace: ns, holder: 'pod-a', ttl_ms: 600_000 });
  assert.equal(lease.status, 200, JSON.stringify(lease.json));
  const epoch = lease.json.epoch as number;
  const writes = [
    await api('/v1/working-state', adminKey, { namespace: ns, goal: 'paint the fence' }, { method: 'PATCH', epoch }),
    await api('/v1/turns', adminKey, { namespace: ns, role: 'user', content: 'hello there' }, { epoch }),
    await api(
      '/v1/pointers/repo',
      adminKey,
      { namespace: ns, type: 'git_ref', fields: { ref: 'main' } },
      { method: 'PUT', epoch },
    ),
  ];
  for (const w of writes) assert.ok(w.status < 300, JSON.stringify(w.json));
});

after(async () => {
  await platform.close();
  await rm(home, { recursive: true, force: true });
});

describe('web console (Chromium)', () => {
  it('signs in, shows a live session, an agent with a fact history and an as-of read, and revokes a key', async (t) => {
    const watched = await openBrowser(t);
    const { page, errors, refused } = watched;
    await openConsole(watched, platform.consoleUrl);
    await page.getByLabel('Memory API key').fill(adminKey);
    await page.getByLabel('Gateway admin token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Sessions' }).waitFor();
    await page.getByText('No sessions yet').waitFor();

    // A request through the gateway: its session appears without a reload.
    const r = await send(platform.gateway.publicUrl, { host: HOST, headers: { cookie: 'app=console-test' } });
    assert.equal(r.status, 200, r.body);
    const row = page.locator('tr[data-session]');
    await row.first().waitFor();
    assert.equal(await row.count(), 1);
    const text = await textOf(row.first());
    assert.match(text, /hello/);
    assert.doesNotMatch(text, /console-test/, 'the raw session key is hidden until asked for');
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'console-sessions.png') });
    await row.first().getByRole('button', { name: 'show key' }).click();
    await page.locator('tr[data-session]', { hasText: 'console-test' }).waitFor();

    await page.getByRole('link', { name: 'Instances' }).click();
    const instance = page.locator('tr[data-instance]').first();
    await instance.waitFor();
    assert.match(await textOf(instance), /running|paused/);
    await instance.getByRole('button', { name: 'Show output' }).click();
    await page.getByRole('heading', { name: /Recent output of hello-/ }).waitFor();

    // An agent: current belief, its history, and an as-of read before the change.
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByRole('link', { name: 'default:run-1' }).click();
    const fact = page.locator('tr[data-fact="user/favorite_color"]');
    await fact.waitFor();
    assert.match(await textOf(fact), /green/);
    await page.getByRole('heading', { name: 'Working state (version 1)' }).waitFor();
    assert.match(await textOf(page.locator('section', { has: page.locator('#state-title') })), /paint the fence/);
    assert.match(await textOf(page.locator('section', { has: page.locator('#lease-title') })), /Heldyes.*Holderpod-a/);
    await page.locator('section', { hasText: 'Recent turns (1 of 1)' }).getByText('hello there').waitFor();
    await page.locator('section', { hasText: 'Pointers' }).getByText('ref=main').waitFor();
    await fact.getByRole('button', { name: /History/ }).click();
    const events = page.locator('ol.timeline li');
    await page.getByRole('heading', { name: 'History of user · favorite_color' }).waitFor();
    assert.equal(await events.count(), 2);
    assert.match(await textOf(events.nth(0)), /asserted blue[\s\S]*superseded by green/);
    assert.match(await textOf(events.nth(1)), /asserted green[\s\S]*held/);
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'console-agent.png'), fullPage: true });
    const halfHourAgo = new Date(Date.now() - 1_800_000).toISOString().slice(0, 19);
    await page.getByLabel('As of').fill(halfHourAgo);
    await page.getByRole('button', { name: 'Read', exact: true }).click();
    await page.getByText(/1 belief as of/).waitFor();
    assert.match(await textOf(fact), /blue/);
    assert.doesNotMatch(await textOf(fact), /green/);

    // Keys: mint one, revoke it, and the API refuses it afterwards.
    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByLabel('Tenant', { exact: true }).fill('default');
    await page.getByLabel(/^Agent/).fill('run-2');
    await page.getByRole('button', { name: 'Mint key' }).click();
    const minted = (await textOf(page.locator('#minted-key'))).trim();
    assert.match(minted, /^tth_[0-9a-f]{16}_[0-9a-f]{64}$/);
    assert.equal((await api('/v1/whoami', minted)).status, 200);
    const id = minted.slice(4, 20);
    const keyRow = page.locator(`tr[data-key="${id}"]`);
    await keyRow.getByRole('button', { name: `Revoke key ${id}` }).click();
    await keyRow.getByRole('button', { name: `Confirm revoke key ${id}` }).click();
    await keyRow.getByText('revoked').waitFor();
    const refusedKey = await api('/v1/whoami', minted);
    assert.equal(refusedKey.status, 401);
    assert.equal(refusedKey.json.error.code, 'key_revoked');
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'console-keys.png'), fullPage: true });

    assert.deepEqual(errors, []);
    assert.deepEqual(refused, [], 'the console made no call the API refused');
  });

  it('is usable at 390 px: no sideways scrolling, tables as labelled cards', async (t) => {
    const watched = await openBrowser(t, { width: 390, height: 844 });
    const { page, errors } = watched;
    await openConsole(watched, platform.consoleUrl);
    await page.getByLabel('Memory API key').fill(adminKey);
    await page.getByLabel('Gateway admin token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('tr[data-session]').first().waitFor();
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 390, `page is ${width}px wide`);
    const label = await page
      .locator('tr[data-session] td')
      .first()
      .evaluate((td) => getComputedStyle(td, '::before').content);
    assert.equal(label, '"Session"');
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'console-mobile.png') });
    assert.deepEqual(errors, []);
  });

  it('shows a tenant-bound admin key only its tenant, and makes no call the API refuses', async (t) => {
    const minted = await api('/v1/keys', adminKey, { tenant: 'acme' });
    assert.equal(minted.status, 201);
    // The tenant's own agent, with a key and a fact, beside default:run-1 (and the default tenant's live session).
    const bot = await api('/v1/keys', minted.json.key, { tenant: 'acme', agent: 'bot-1' });
    assert.equal(bot.status, 201, JSON.stringify(bot.json));
    const fact = await api('/v1/memories', bot.json.key, {
      subject: 'user',
      predicate: 'favorite_color',
      value: 'red',
    });
    assert.equal(fact.status, 200, JSON.stringify(fact.json));
    const watched = await openBrowser(t);
    const { page, errors, refused } = watched;
    await openConsole(watched, platform.consoleUrl);
    await page.getByLabel('Memory API key').fill(minted.json.key);
    await page.getByLabel('Gateway admin token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('No sessions yet').waitFor();
    await page.getByRole('link', { name: 'Instances' }).click();
    // The default tenant's hello instance runs, but is not this tenant's.
    await page.getByText('No instances running.').waitFor();
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByRole('link', { name: 'acme:bot-1' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'default:run-1' }).count(), 0, 'no other tenant’s agent');
    await page.getByRole('link', { name: 'acme:bot-1' }).click();
    await page.locator('tr[data-fact="user/favorite_color"]', { hasText: 'red' }).waitFor();
    await page.getByRole('link', { name: 'Keys' }).click();
    const rows = page.locator('tr[data-key]');
    await rows.first().waitFor();
    assert.equal(await rows.count(), 2, 'only the tenant’s own keys');
    for (const row of await rows.all()) assert.match(await textOf(row), /acme/);
    assert.equal(await page.getByLabel('Tenant', { exact: true }).inputValue(), 'acme');
    assert.deepEqual(errors, []);
    assert.deepEqual(refused, []);
  });

  it('ends a session and deletes an instance with a confirm; their next request gets a new instance', async (t) => {
    const watched = await openBrowser(t);
    const { page, errors, refused } = watched;
    const hit = (key: string) => send(platform.gateway.publicUrl, { host: HOST, headers: { cookie: `app=${key}` } });
    // The instance name the app prints (its pid may be the same in every instance: each has its own PID namespace).
    const served = (r: { body: string }) => /^Instance: (\S+)/m.exec(r.body)?.[1];
    const first = await hit('end-me-please-now');
    assert.equal(first.status, 200);
    await openConsole(watched, platform.consoleUrl);
    await page.getByLabel('Memory API key').fill(adminKey);
    await page.getByLabel('Gateway admin token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const row = page.locator('tr[data-session]', { hasText: 'end-me-p' });
    await row.waitFor();
    const end = row.getByRole('button', { name: /^End session / });
    await end.click();
    // The first click only arms the button: the session is still there.
    const confirm = row.getByRole('button', { name: /^Confirm end session / });
    await confirm.waitFor();
    assert.equal(served(await hit('end-me-please-now')), served(first));
    await confirm.click();
    await row.waitFor({ state: 'detached' });
    const again = await hit('end-me-please-now');
    assert.equal(again.status, 200);
    assert.notEqual(served(again), served(first), 'a new instance after the end');

    await page.getByRole('link', { name: 'Instances' }).click();
    const name = served(again) as string;
    assert.ok(name);
    const instance = page.locator(`tr[data-instance="${name}"]`);
    await instance.getByRole('button', { name: `Delete instance ${name}` }).click();
    await instance.getByRole('button', { name: `Confirm delete instance ${name}` }).click();
    await instance.waitFor({ state: 'detached' });
    const third = await hit('end-me-please-now');
    assert.equal(third.status, 200);
    assert.notEqual(served(third), name, 'a new instance after the delete');
    assert.deepEqual(errors, []);
    assert.deepEqual(refused, [], 'the console made no call the API refused');
  });
});
