import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { localPlatformDrivers } from '../../src/cli/drivers.ts';
import { silentLogger } from '../../src/common/log.ts';
import { starterRegistry } from '../../src/memory/registry.ts';
import { type LocalPlatform, startLocalPlatform } from '../../src/up/platform.ts';
import { send } from '../gateway/helpers/harness.ts';
import { PROBE } from '../runtime/local/isolation/helpers.ts';
import { startPostgres, startRedis } from './databases.ts';

const ANN = `        serving.knative.dev/workload-type: "sandbox"
        serving.knative.dev/session-affinity-cookie: "s"
        autoscaling.knative.dev/target: "1"`;

function service(name: string, extra = ''): string {
  return `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: ${name}
spec:
  template:
    metadata:
      annotations:
${ANN}
    spec:
      containers:
        - command: ["node", ${JSON.stringify(PROBE)}]
${extra}`;
}

interface WhoAmI {
  hostname: string;
  env: { TETHER_URL: string; TETHER_TOKEN_FILE: string };
  addresses: string[];
}

/** True when a TCP connection from this (host) process succeeds. */
function hostConnects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

describe('tether up with --isolation namespaces: the fence, seen from inside an instance', () => {
  it('reaches the memory server and nothing else on the machine; sees nothing of the data folder', async (t) => {
    const [redisPort, pgPort] = await Promise.all([startRedis(t), startPostgres(t)]);
    // One hook closes the platform, then removes the folder (node runs t.after hooks first-in first-out).
    const root = await mkdtemp(join(tmpdir(), 'tether-fence-'));
    chmodSync(root, 0o755);
    let platform: LocalPlatform | undefined;
    t.after(async () => {
      await platform?.close();
      await rm(root, { recursive: true, force: true });
    });
    // The data folder lies inside the folder the instances run from (their workingDir): it must be masked.
    const data = join(root, 'data');
    mkdirSync(data);
    const manifest = join(root, 'services.yaml');
    writeFileSync(
      manifest,
      `${service('probe')}---\n${service('hog', '          resources:\n            limits:\n              memory: "128Mi"\n')}`,
    );
    platform = await startLocalPlatform({
      dataDir: data,
      services: [manifest],
      memoryPort: 0,
      gatewayPort: 0,
      adminPort: 0,
      defaultRegistry: starterRegistry('personal'),
      drivers: localPlatformDrivers({ graceMs: 500, isolation: 'namespaces', sandboxDir: join(root, 'sandboxes') }),
      log: silentLogger(),
    });
    assert.equal(platform.isolation, 'namespaces');
    const gw = platform.gateway.publicUrl;
    const ask = async <T>(session: string, path: string, svc = 'probe') => {
      const r = await send(gw, { host: `${svc}.default.example.com`, path, headers: { cookie: `s=${session}` } });
      assert.equal(r.status, 200, r.body);
      return JSON.parse(r.body) as T;
    };
    const a = await ask<WhoAmI>('a', '/whoami');
    const b = await ask<WhoAmI>('b', '/whoami');
    const memory = new URL(a.env.TETHER_URL);
    const hostSide = memory.hostname;
    assert.notEqual(hostSide, '127.0.0.1', 'TETHER_URL points through the veth');

    // It exchanges its token at TETHER_URL.
    const exchanged = await ask<{ status: number; namespace: string; hasKey: boolean }>('a', '/exchange');
    assert.equal(exchanged.status, 200);
    assert.equal(exchanged.hasKey, true);
    assert.match(exchanged.namespace, /^default:probe-/);

    // The databases listen on every address: from the host they answer on the veth's host side too,
    // so only the fence keeps the instance away.
    assert.equal(await hostConnects(hostSide, redisPort), true, 'control: redis is reachable on that address');
    assert.equal(await hostConnects(hostSide, pgPort), true, 'control: postgres is reachable on that address');
    const admin = Number(new URL(platform.gateway.adminUrl).port);
    const gatewayPort = Number(new URL(gw).port);
    const authority = Number(new URL(platform.authority.url).port);
    const targets: Array<[string, string, number]> = [
      ['redis on the host side', hostSide, redisPort],
      ['postgres on the host side', hostSide, pgPort],
      ['redis on loopback', '127.0.0.1', redisPort],
      ['the gateway admin port', hostSide, admin],
      ['the gateway admin port on loopback', '127.0.0.1', admin],
      ['the gateway public port', hostSide, gatewayPort],
      ['the identity authority', hostSide, authority],
      ['another instance', b.addresses[0] ?? '', 8080],
    ];
    for (const [what, host, port] of targets) {
      const r = await ask<{ connected: boolean; error?: string }>('a', `/connect?host=${host}&port=${port}`);
      assert.equal(r.connected, false, `the instance reached ${what} (${host}:${port})`);
    }
    const toMemory = await ask<{ connected: boolean }>('a', `/connect?host=${hostSide}&port=${memory.port}`);
    assert.equal(toMemory.connected, true);

    // Nothing of the data folder is visible, though it lies inside the instance's workingDir.
    const nameOfB = b.hostname; // the hostname of an instance is its name
    const secrets = ['memory/tether.db', 'memory/admin.key', 'authority/kubeconfig', 'gateway/admin.token'];
    for (const file of [...secrets, `instances/${nameOfB}/token`]) {
      const r = await ask<{ ok: boolean; error?: string }>('a', `/read?path=${encodeURIComponent(join(data, file))}`);
      assert.deepEqual(r, { ok: false, error: 'ENOENT' }, file);
    }
    assert.equal((await ask<{ ok: boolean }>('a', `/read?path=${encodeURIComponent(manifest)}`)).ok, true);

    // A memory hog is killed at its limit: its session gets 502, then a new instance; the gateway is unaffected.
    const first = await ask<{ pid: number; hostname: string }>('h', '/whoami', 'hog');
    const hog = await send(gw, { host: 'hog.default.example.com', path: '/hog', headers: { cookie: 's=h' } });
    assert.equal(hog.status, 502, hog.body);
    let next: { hostname: string } | undefined;
    for (let i = 0; i < 100 && !next; i++) {
      const r = await send(gw, { host: 'hog.default.example.com', path: '/whoami', headers: { cookie: 's=h' } });
      if (r.status === 200) next = JSON.parse(r.body) as { hostname: string };
      else await new Promise((res) => setTimeout(res, 20));
    }
    assert.ok(next, 'the session got a new instance');
    assert.notEqual(next.hostname, first.hostname);
    assert.equal((await ask<WhoAmI>('a', '/whoami')).env.TETHER_URL, a.env.TETHER_URL, 'other sessions unaffected');
  });
});
