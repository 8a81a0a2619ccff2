/**
 * `tether gateway` as a process, secure by default (issue 22 item 4): without `--admin-token` it generates one
 * into `<--data>/admin.token` (0600), prints its path and never the token, and its admin API refuses requests
 * without it (`/healthz` excepted); an open admin API takes `--insecure-open-admin`, logged as a warning. And
 * the seed's Pause-mode curl (item 7): `Cookie: app=11` to the example `ai-agent-pause` service shows
 * `Raw Cookie Header: app=11`, exactly as the seed prints it.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { send, serviceYaml, waitFor, writeManifest } from '../gateway/helpers/harness.ts';
import { runTether } from '../helpers/tether-cli.ts';
import { LOOPBACK_PORTS } from './helpers/gateway-process.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = resolve(ROOT, 'test/gateway/helpers/gateway-cli.ts');
const SECRETS = { TETHER_CLAIM_SECRET: 'c'.repeat(64), TETHER_SESSION_SECRET: 's'.repeat(64) };

interface Run {
  child: ChildProcess;
  out: () => string;
  publicUrl: string;
  adminUrl: string;
}

/** Starts `tether gateway` with no admin token in its environment; stopped (SIGTERM) after the test. */
async function start(t: TestContext, args: string[]): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'gateway', ...args, ...LOOPBACK_PORTS], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TETHER_LOG_LEVEL: 'info', TETHER_GATEWAY_ADMIN_TOKEN: undefined, ...SECRETS },
  });
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });
  let out = '';
  child.stdout?.on('data', (c) => {
    out += c;
  });
  child.stderr?.on('data', (c) => {
    out += c;
  });
  // The banner comes after the listening line: wait for both.
  await waitFor(
    'banner',
    () => (out.includes('Try:') && out.includes('"gateway listening"')) || child.exitCode !== null,
    { timeoutMs: 120_000 },
  );
  const line = out.split('\n').find((l) => l.includes('"gateway listening"'));
  if (!line) throw new Error(`gateway did not start: ${out}`);
  const { publicUrl, adminUrl } = JSON.parse(line) as { publicUrl: string; adminUrl: string };
  return { child, out: () => out, publicUrl, adminUrl };
}

const ROUTES = ['/', '/_tether/services', '/_tether/sessions?reveal=keys', '/_tether/instances', '/metrics'];

describe('tether gateway: the admin API is secure by default', () => {
  it('generates a token into --data/admin.token (0600), prints its path only, and refuses requests without it', async (t) => {
    const data = await mkdtemp(join(tmpdir(), 'tether-gw-admin-'));
    t.after(() => rm(data, { recursive: true, force: true }));
    const file = await writeManifest(t, serviceYaml('sec', { 'serving.knative.dev/session-affinity-cookie': 'app' }));
    const run = await start(t, ['--services', file, '--data', data]);
    const tokenFile = join(data, 'admin.token');
    assert.equal(statSync(tokenFile).mode & 0o777, 0o600);
    const token = readFileSync(tokenFile, 'utf8').trim();
    assert.match(token, /^[0-9a-f]{64}$/);
    assert.ok(run.out().includes(`(admin token: ${tokenFile})`), 'the banner names the file');
    assert.ok(!run.out().includes(token), 'the token is never printed');

    const key = 'the-session-key-11';
    const hit = await send(run.publicUrl, { host: 'sec.default.example.com', headers: { cookie: `app=${key}` } });
    assert.equal(hit.status, 200);
    for (const path of ROUTES) {
      const attempts: Array<Record<string, string>> = [{}, { authorization: 'Bearer wrong' }, { authorization: token }];
      for (const headers of attempts) {
        const r = await send(run.adminUrl, { path, headers });
        assert.equal(r.status, 401, `${path} ${JSON.stringify(headers)}`);
        assert.equal((JSON.parse(r.body) as { error: { code: string } }).error.code, 'unauthenticated');
        assert.ok(!r.body.includes(key));
      }
    }
    for (const [method, path] of [
      ['DELETE', '/_tether/instances/sec-abcde'],
      ['DELETE', '/_tether/sessions/abcdefghijkl'],
    ]) {
      assert.equal((await send(run.adminUrl, { method, path })).status, 401, `${method} ${path}`);
    }
    // Liveness holds no data: the Helm chart's probes ask it without the token.
    assert.equal((await send(run.adminUrl, { path: '/healthz' })).status, 200);
    const auth = { authorization: `Bearer ${token}` };
    const shown = await send(run.adminUrl, { path: '/_tether/sessions?reveal=keys', headers: auth });
    assert.equal(shown.status, 200);
    assert.deepEqual(
      (JSON.parse(shown.body) as Array<{ key: string }>).map((s) => s.key),
      [key],
    );

    // A restart keeps the token (the CLI clients read the file).
    run.child.kill('SIGTERM');
    await once(run.child, 'exit');
    const again = await start(t, ['--services', file, '--data', data]);
    assert.equal(readFileSync(tokenFile, 'utf8').trim(), token);
    assert.doesNotMatch(again.out(), /generated the gateway admin token/);
    assert.equal((await send(again.adminUrl, { path: '/_tether/services', headers: auth })).status, 200);
  });

  it('is open only with --insecure-open-admin, which logs a warning', async (t) => {
    const data = await mkdtemp(join(tmpdir(), 'tether-gw-admin-'));
    t.after(() => rm(data, { recursive: true, force: true }));
    const file = await writeManifest(t, serviceYaml('open', {}));
    const run = await start(t, ['--services', file, '--data', data, '--insecure-open-admin']);
    assert.match(run.out(), /"level":40.*the gateway admin API is open \(--insecure-open-admin\)/);
    assert.equal((await send(run.adminUrl, { path: '/_tether/sessions' })).status, 200);
    assert.throws(() => statSync(join(data, 'admin.token')), /ENOENT/, 'no token file is made');
  });

  it('refuses --insecure-open-admin with a token, and an empty token, as usage errors (exit 2)', async () => {
    // bin/tether itself (its exit codes); each exits before reading a manifest or writing anything.
    const base = ['gateway', '--services', 'no-such-folder', ...LOOPBACK_PORTS];
    const both = await runTether([...base, '--admin-token', 'x'.repeat(40), '--insecure-open-admin']);
    assert.equal(both.code, 2, both.stderr);
    assert.match(both.stderr, /--insecure-open-admin: cannot be used with --admin-token/);
    const fromEnv = await runTether([...base, '--insecure-open-admin'], { TETHER_GATEWAY_ADMIN_TOKEN: 'y'.repeat(40) });
    assert.equal(fromEnv.code, 2, fromEnv.stderr);
    const empty = await runTether([...base, '--admin-token', ' ']);
    assert.equal(empty.code, 2, empty.stderr);
    assert.match(empty.stderr, /--admin-token: must not be empty/);
  });
});

describe("the seed's Pause-mode example (examples/services/ai-agent-pause.yaml)", () => {
  it('curl -H "Cookie: app=11" shows Raw Cookie Header: app=11, as the seed prints it', async (t) => {
    const data = await mkdtemp(join(tmpdir(), 'tether-gw-seed-'));
    t.after(() => rm(data, { recursive: true, force: true }));
    const run = await start(t, ['--services', 'examples/services/ai-agent-pause.yaml', '--data', data]);
    const r = await send(run.publicUrl, { host: 'ai-agent-pause.default.example.com', headers: { cookie: 'app=11' } });
    assert.equal(r.status, 200);
    assert.match(
      r.body,
      /^Hello World!\n\nCookies:\n {2}Name: {2}app\n {2}Value: 11\n\nRaw Cookie Header: app=11\n/,
      'the Cookie header reached the app as the client sent it',
    );
    // The client still gets its new session (cookie `test`), and the same cookie comes back to the same process.
    const key = /^test=([^;]+);/.exec(String(r.headers['set-cookie']))?.[1];
    assert.ok(key, 'Set-Cookie: test=<new key>');
    const next = await send(run.publicUrl, {
      host: 'ai-agent-pause.default.example.com',
      headers: { cookie: `app=11; test=${key}` },
    });
    assert.equal(next.headers['x-pid'], r.headers['x-pid']);
    assert.match(next.body, new RegExp(`Raw Cookie Header: app=11; test=${key}\\n`));
  });
});
