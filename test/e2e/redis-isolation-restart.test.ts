/**
 * Redis session mode with `--isolation namespaces` across a gateway crash. Isolated instances cannot outlive
 * their gateway (bubblewrap's `--die-with-parent`; the network fence is the gateway process's), so they are
 * never adopted: after SIGKILL their processes are gone, the restarted gateway removes their network
 * namespaces and ends their sessions in Redis, an old cookie gets a fresh instance, and a graceful stop
 * deletes isolated instances instead of leaving them. Needs root (network namespaces), as the isolation tests.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { type AdminInstance, send, serviceYaml, waitFor } from '../gateway/helpers/harness.ts';
import { startRedis } from '../helpers/redis.ts';
import { openTempDir, ourNetworks, processesOf } from '../runtime/local/isolation/helpers.ts';
import { type AdminSession, adminJson, LOOPBACK_PORTS, runGateway } from './helpers/gateway-process.ts';

function netnsOf(pid: number): string {
  return execFileSync('ip', ['netns', 'identify', String(pid)], { encoding: 'utf8' }).trim();
}

const HOST = 'iso.default.example.com';

describe('tether gateway --session-store redis --isolation namespaces: SIGKILL and restart', () => {
  it('isolated instances end with their gateway: no process or network left, sessions ended, old cookies served anew', async (t) => {
    const redis = await startRedis(t);
    const stateDir = await mkdtemp(join(tmpdir(), 'tether-state-'));
    t.after(() => rm(stateDir, { recursive: true, force: true }));
    // The manifest's folder is the instances' working folder: their own uids must be able to enter it.
    const file = join(await openTempDir(t, 'tether-iso-'), 'services.yaml');
    await writeFile(
      file,
      serviceYaml(
        'iso',
        {
          'serving.knative.dev/session-affinity-cookie': 'app',
          'autoscaling.knative.dev/target': '1',
          'serving.knative.dev/session-timeout': '1h',
        },
        // In its own network namespace the app listens on every address of it (it defaults to loopback).
        '          env:\n            - name: HOST\n              value: "0.0.0.0"\n',
      ),
    );
    const args = [
      ...['--services', file, ...LOOPBACK_PORTS, '--state-dir', stateDir],
      ...['--session-store', 'redis', '--redis-url', redis.url, '--redis-prefix', redis.prefix()],
      ...['--gateway-id', 'gw-iso', '--isolation', 'namespaces', '--new-sessions-per-minute', '0'],
    ];
    const first = await runGateway(args);
    t.after(() => first.child.kill('SIGKILL'));
    for (const key of ['a', 'b']) {
      const r = await send(first.publicUrl, { host: HOST, headers: { cookie: `app=${key}` } });
      assert.equal(r.status, 200, r.body);
    }
    const before = await adminJson<AdminInstance[]>(first, '/_tether/instances');
    assert.equal(before.length, 2);
    const nets = before.map((i) => netnsOf(i.pid as number));
    for (const n of nets) assert.ok(ourNetworks().includes(n), `${n} is one of ours`);

    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    for (const i of before) {
      await waitFor(`instance ${i.name} gone with its gateway`, () => processesOf(i.name).length === 0);
    }

    const second = await runGateway(args);
    t.after(async () => {
      if (second.child.exitCode === null) {
        second.child.kill('SIGKILL');
        await once(second.child, 'exit');
      }
    });
    assert.match(second.out(), /"adopted":0/);
    assert.match(second.out(), /"ended":2/);
    const left = ourNetworks();
    for (const n of nets) assert.ok(!left.includes(n), `network ${n} of the killed gateway removed`);
    const tables = execFileSync('nft', ['list', 'tables'], { encoding: 'utf8' });
    assert.doesNotMatch(tables, new RegExp(`tether_${first.child.pid}_`), 'its fence table removed');
    assert.deepEqual(await adminJson<AdminSession[]>(second, '/_tether/sessions'), [], 'their sessions ended');

    // An old cookie starts a fresh session on a new instance (its state is not the old one's).
    const again = await send(second.publicUrl, { host: HOST, headers: { cookie: 'app=a' } });
    assert.equal(again.status, 200, again.body);
    assert.equal(again.headers['x-count'], '1');
    const now = await adminJson<AdminInstance[]>(second, '/_tether/instances');
    assert.equal(now.length, 1);
    assert.ok(!before.some((i) => i.name === now[0]?.name));
    const fresh = now[0] as AdminInstance;
    const freshNet = netnsOf(fresh.pid as number);

    // A graceful stop deletes isolated instances even in Redis mode (they could not be adopted).
    second.child.kill('SIGTERM');
    const [code] = await once(second.child, 'exit');
    assert.equal(code, 0);
    assert.deepEqual(processesOf(fresh.name), []);
    assert.ok(!ourNetworks().includes(freshNet), 'its network is removed');
  });
});
