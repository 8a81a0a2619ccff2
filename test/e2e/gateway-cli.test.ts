import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { type AdminInstance, isGone, send, serviceYaml, waitFor, writeManifest } from '../gateway/helpers/harness.ts';
import { spawnTether } from '../helpers/tether-cli.ts';
import { ADMIN_AUTH, ADMIN_TOKEN, LOOPBACK_PORTS } from './helpers/gateway-process.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = resolve(ROOT, 'test/gateway/helpers/gateway-cli.ts');

/** Secrets from the environment, so no test writes `.tether/gateway` into the repository (one test uses --data). */
const SECRETS = {
  TETHER_CLAIM_SECRET: 'c'.repeat(64),
  TETHER_SESSION_SECRET: 's'.repeat(64),
  TETHER_GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
};

function runCli(
  args: string[],
  env: Record<string, string | undefined> = SECRETS,
): { child: ChildProcess; out: () => string; err: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'gateway', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      TETHER_LOG_LEVEL: 'info',
      TETHER_CLAIM_SECRET: undefined,
      TETHER_SESSION_SECRET: undefined,
      TETHER_GATEWAY_ADMIN_TOKEN: undefined,
      ...env,
    },
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (c) => {
    out += c;
  });
  child.stderr?.on('data', (c) => {
    err += c;
  });
  return { child, out: () => out, err: () => err };
}

/**
 * The URLs of the gateway `run` started, from its `gateway listening` log line. Waits up to 120 s, as the other
 * process starts do: a start through tsx takes seconds, many more on a loaded machine, and is not what is tested.
 */
async function listening(run: ReturnType<typeof runCli>): Promise<{ publicUrl: string; adminUrl: string }> {
  const line = await waitFor(
    'listening line',
    () =>
      run
        .out()
        .split('\n')
        .find((l) => l.includes('gateway listening')),
    { timeoutMs: 120_000 },
  );
  return JSON.parse(line) as { publicUrl: string; adminUrl: string };
}

describe('tether gateway (command line)', () => {
  it('is registered in bin/tether with its flags', async () => {
    const child = spawnTether(['gateway', '--help'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout?.on('data', (c) => {
      out += c;
    });
    const [code] = await once(child, 'exit');
    assert.equal(code, 0);
    for (const flag of [
      '--services',
      '--port',
      '--admin-port',
      '--domain',
      '--queue-timeout',
      '--session-store',
      '--max-instances',
      '--admin-token',
      '--insecure-open-admin',
      '--data',
      '--signed-session-keys',
      '--secure-cookies',
      '--trusted-proxies',
    ]) {
      assert.ok(out.includes(flag), `help lists ${flag}`);
    }
  });

  it('refuses a bad manifest naming file, document and field, and exits non-zero without serving', async (t) => {
    const file = await writeManifest(
      t,
      `${serviceYaml('ok', {})}---\n${serviceYaml('bad', { 'serving.knative.dev/session-timeout': 'half an hour' })}`,
    );
    const run = runCli(['--services', file, '--port', '0', '--admin-port', '0']);
    t.after(() => run.child.kill('SIGKILL'));
    const [code] = await once(run.child, 'exit');
    assert.equal(code, 1);
    assert.match(
      run.err(),
      new RegExp(`${file}: document 2: .*serving\\.knative\\.dev/session-timeout.*invalid duration`),
    );
    assert.doesNotMatch(run.out(), /gateway listening/);
  });

  it('serves the example services, then on SIGTERM stops with every instance gone', async (t) => {
    const run = runCli(['--services', 'examples/services', ...LOOPBACK_PORTS]);
    t.after(() => run.child.kill('SIGKILL'));
    const { publicUrl, adminUrl } = await listening(run);
    assert.match(run.out(), /image is ignored by the local runtime/);
    const r = await send(publicUrl, { host: 'ai-agent-delete.default.example.com', headers: { cookie: 'app=11' } });
    assert.equal(r.status, 200);
    assert.match(r.body, /^Hello World!\n\nCookies:\n {2}Name: {2}app\n {2}Value: 11\n\nRaw Cookie Header: app=11\n/);
    const p = await send(publicUrl, { host: 'ai-agent-pause.default.example.com', headers: { cookie: 'test=11' } });
    assert.equal(p.status, 200);
    const instances = JSON.parse(
      (await send(adminUrl, { path: '/_tether/instances', headers: { ...ADMIN_AUTH } })).body,
    ) as AdminInstance[];
    assert.equal(instances.filter((i) => i.service === 'ai-agent-pause' && i.warm).length >= 2, true);
    const pids = instances.map((i) => i.pid).filter((x): x is number => x !== null);
    run.child.kill('SIGTERM');
    const [code] = await once(run.child, 'exit');
    assert.equal(code, 0);
    for (const pid of pids) assert.ok(isGone(pid), `instance pid ${pid} left behind`);
  });

  it('kills the instances of a SIGKILLed gateway when the next one starts with the same state dir', async (t) => {
    const stateDir = await mkdtemp(join(tmpdir(), 'tether-state-'));
    t.after(() => rm(stateDir, { recursive: true, force: true }));
    const file = await writeManifest(
      t,
      serviceYaml('orph', {
        'serving.knative.dev/warm-pool': '2',
        'serving.knative.dev/session-affinity-cookie': 'orph',
      }),
    );
    const args = ['--services', file, ...LOOPBACK_PORTS, '--state-dir', stateDir];
    const first = runCli(args);
    t.after(() => first.child.kill('SIGKILL'));
    const { adminUrl } = await listening(first);
    const { publicUrl } = JSON.parse(
      first
        .out()
        .split('\n')
        .find((l) => l.includes('gateway listening')) as string,
    ) as { publicUrl: string };
    const bound = await send(publicUrl, { host: 'orph.default.example.com', headers: { cookie: 'orph=k1' } });
    assert.equal(bound.status, 200);
    const instances = await waitFor('warm pool refilled', async () => {
      const list = JSON.parse(
        (await send(adminUrl, { path: '/_tether/instances', headers: { ...ADMIN_AUTH } })).body,
      ) as AdminInstance[];
      return list.filter((i) => i.pid !== null && i.state !== 'starting').length === 3 ? list : undefined;
    });
    const pids = instances.map((i) => i.pid).filter((x): x is number => x !== null);
    assert.equal(pids.length, 3);
    assert.ok(pids.includes(Number(bound.headers['x-pid'])));
    t.after(() => {
      for (const pid of pids) {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    });
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    for (const pid of pids) assert.ok(!isGone(pid), `pid ${pid} survives its gateway's SIGKILL (no exit handler ran)`);
    const second = runCli(args);
    t.after(async () => {
      // Graceful, so its own instances go too (a SIGKILL here would orphan them).
      if (second.child.exitCode === null && second.child.signalCode === null) {
        second.child.kill('SIGTERM');
        await once(second.child, 'exit');
      }
    });
    const restarted = await listening(second);
    await waitFor('orphans killed', () => pids.every(isGone));
    assert.match(second.out(), /sessions do not survive a gateway restart/);
    // Memory mode: the old binding is gone with its process; the same cookie starts a new session elsewhere.
    const { publicUrl: url2 } = JSON.parse(
      second
        .out()
        .split('\n')
        .find((l) => l.includes('gateway listening')) as string,
    ) as { publicUrl: string };
    const again = await send(url2, { host: 'orph.default.example.com', headers: { cookie: 'orph=k1' } });
    assert.equal(again.status, 200);
    assert.ok(!pids.includes(Number(again.headers['x-pid'])), 'no request reaches a stale instance');
    assert.ok(restarted.adminUrl);
    assert.match(second.out(), /deleting a leftover instance of a previous gateway/);
    second.child.kill('SIGTERM');
    const [code] = await once(second.child, 'exit');
    assert.equal(code, 0);
  });

  it('generates its claim secret once into --data (0600): the same session keeps its claim name across restarts', async (t) => {
    const data = await mkdtemp(join(tmpdir(), 'tether-gw-data-'));
    t.after(() => rm(data, { recursive: true, force: true }));
    const file = await writeManifest(t, serviceYaml('named', { 'serving.knative.dev/session-affinity-cookie': 'app' }));
    const claimOnce = async (dir: string, env: Record<string, string | undefined> = {}) => {
      const run = runCli(['--services', file, ...LOOPBACK_PORTS, '--data', dir], env);
      t.after(() => run.child.kill('SIGKILL'));
      const { publicUrl, adminUrl } = await listening(run);
      assert.equal(
        (await send(publicUrl, { host: 'named.default.example.com', headers: { cookie: 'app=11' } })).status,
        200,
      );
      // No token given: the gateway generated one into --data; the admin API needs it.
      const token = readFileSync(join(dir, 'admin.token'), 'utf8').trim();
      const auth = { authorization: `Bearer ${token}` };
      const [s] = JSON.parse((await send(adminUrl, { path: '/_tether/sessions', headers: auth })).body) as Array<{
        claim: string;
      }>;
      run.child.kill('SIGTERM');
      await once(run.child, 'exit');
      return { claim: s?.claim as string, out: run.out() + run.err() };
    };
    const first = await claimOnce(data);
    assert.match(first.claim, /^named-[0-9a-f]{32}$/);
    for (const name of ['claim.secret', 'session.secret', 'admin.token']) {
      const path = join(data, name);
      assert.equal(statSync(path).mode & 0o777, 0o600, name);
      const secret = readFileSync(path, 'utf8').trim();
      assert.match(secret, /^[0-9a-f]{64}$/);
      assert.ok(!first.out.includes(secret), `${name} is never logged`);
    }
    assert.match(first.out, /generated a gateway secret/);
    const second = await claimOnce(data);
    assert.equal(second.claim, first.claim, 'same secret, same name');
    assert.doesNotMatch(second.out, /generated a gateway secret/);
    const other = await mkdtemp(join(tmpdir(), 'tether-gw-data-'));
    t.after(() => rm(other, { recursive: true, force: true }));
    assert.notEqual((await claimOnce(other)).claim, first.claim, 'another deployment, another name');
    const fromEnv = await claimOnce(other, { TETHER_CLAIM_SECRET: readFileSync(join(data, 'claim.secret'), 'utf8') });
    assert.equal(fromEnv.claim, first.claim, 'TETHER_CLAIM_SECRET overrides the file');
  });

  it('reloads its manifests on SIGHUP: a new service is served, a removed one is gone, a broken file changes nothing', async (t) => {
    const file = await writeManifest(t, serviceYaml('first', {}));
    const run = runCli(['--services', file, ...LOOPBACK_PORTS]);
    t.after(() => run.child.kill('SIGKILL'));
    const { publicUrl } = await listening(run);
    const status = async (name: string) => (await send(publicUrl, { host: `${name}.default.example.com` })).status;
    assert.equal(await status('first'), 200);
    await writeFile(file, serviceYaml('second', {}));
    run.child.kill('SIGHUP');
    await waitFor('reloaded', () => run.out().includes('services reloaded'));
    assert.equal(await status('second'), 200);
    assert.equal(await status('first'), 404);
    await writeFile(file, serviceYaml('third', { 'serving.knative.dev/session-timeout': 'soon' }));
    run.child.kill('SIGHUP');
    await waitFor('reload refused', () => run.out().includes('reload failed'));
    assert.match(run.out(), /document 1: .*session-timeout/);
    assert.equal(await status('second'), 200, 'still serving what it had');
    run.child.kill('SIGTERM');
    const [code] = await once(run.child, 'exit');
    assert.equal(code, 0);
  });
});
