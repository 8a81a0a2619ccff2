import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { localPlatformDrivers } from '../../src/cli/drivers.ts';
import { silentLogger } from '../../src/common/log.ts';
import { starterRegistry } from '../../src/memory/registry.ts';
import { type LocalPlatform, startLocalPlatform } from '../../src/up/platform.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const AGENT = resolve(ROOT, 'examples/memory-agent/server.ts');
const HOST = 'memory-agent.default.example.com';

let home: string;
let dir: string;
let manifest: string;
let platform: LocalPlatform;

before(async () => {
  // A checkout inside a home only its owner enters (mkdtemp: 0700), as /root/tether is: the manifest's
  // folder, every service's default workingDir, holds the data folder, which stays masked.
  home = mkdtempSync(join(tmpdir(), 'tether-up-'));
  dir = join(home, 'checkout');
  mkdirSync(dir, { mode: 0o755 });
  manifest = join(dir, 'agent.yaml');
  writeFileSync(
    manifest,
    `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: memory-agent
spec:
  template:
    metadata:
      annotations:
        serving.knative.dev/workload-type: "sandbox"
        serving.knative.dev/sandbox-idle-policy: "delete"
        serving.knative.dev/session-affinity-cookie: "agent"
        serving.knative.dev/session-timeout: "1s"
        serving.knative.dev/warm-pool: "1"
        autoscaling.knative.dev/target: "1"
    spec:
      containers:
        - command: ["node"]
          args: ["--import", "tsx", ${JSON.stringify(AGENT)}]
          workingDir: ${JSON.stringify(ROOT)}
`,
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
});
after(async () => {
  await platform.close();
  rmSync(home, { recursive: true, force: true });
});

interface Turn {
  agent: string;
  namespace: string;
  instance: string;
  pid: number;
  remembered: string[];
}

/** One request through the gateway (fetch cannot set Host, node:http can). */
async function turn(cookie: string): Promise<Turn> {
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = http.get(platform.gateway.publicUrl, { headers: { host: HOST, cookie: `agent=${cookie}` } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
  });
  assert.equal(status, 200, text);
  return JSON.parse(text) as Turn;
}

async function instances(): Promise<{ name: string; warm: boolean; sessions: string[] }[]> {
  const token = readFileSync(platform.adminTokenFile, 'utf8').trim();
  const headers = { authorization: `Bearer ${token}` };
  return (await fetch(`${platform.gateway.adminUrl}/_tether/instances`, { headers })).json() as Promise<
    { name: string; warm: boolean; sessions: string[] }[]
  >;
}

async function exchange(
  token: string,
): Promise<{ status: number; body: { error?: { code: string; message: string } } }> {
  const r = await fetch(`${platform.memory.url}/v1/auth/kubernetes`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token }),
  });
  return { status: r.status, body: (await r.json()) as { error?: { code: string; message: string } } };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('tether up: gateway instances with workload identity and memory', () => {
  it('refuses a warm-pool instance a key (still in warm pool)', async () => {
    const warm = await until('a warm instance', async () => (await instances()).find((i) => i.warm));
    const token = readFileSync(join(dir, 'data', 'instances', warm.name, 'token'), 'utf8');
    const r = await exchange(token);
    assert.equal(r.status, 401);
    assert.deepEqual(r.body.error, { code: 'warm_pool', message: 'still in warm pool' });
  });

  it('gives a session its memory back on a new instance after the old one was deleted; another session cannot see it', async () => {
    const t1 = await turn('alice');
    assert.match(t1.agent, /^memory-agent-[0-9a-f]{32}$/);
    assert.equal(t1.namespace, `default:${t1.agent}`);
    assert.deepEqual(t1.remembered, []);
    const t2 = await turn('alice');
    assert.equal(t2.pid, t1.pid);
    assert.deepEqual(t2.remembered, [`turn 1 served by ${t1.instance}`]);
    const oldToken = readFileSync(join(dir, 'data', 'instances', t1.instance, 'token'), 'utf8');

    // idle for 1 s with the delete policy: the instance is deleted, its token dies with its pod
    await until('the idle instance to be deleted', async () =>
      (await instances()).some((i) => i.name === t1.instance) ? undefined : true,
    );
    assert.ok(!readdirSync(join(dir, 'data', 'instances')).includes(t1.instance));
    assert.equal((await exchange(oldToken)).status, 401);

    const t3 = await turn('alice');
    assert.notEqual(t3.instance, t1.instance);
    assert.equal(t3.agent, t1.agent);
    assert.deepEqual(t3.remembered, [`turn 1 served by ${t1.instance}`, `turn 2 served by ${t1.instance}`]);

    const bob = await turn('bob');
    assert.notEqual(bob.agent, t1.agent);
    assert.deepEqual(bob.remembered, []);
  });

  it('keeps apart the two session keys whose 40-bit agent names collided (rt-1377755, rt-1499321)', async () => {
    const a = await turn('rt-1377755');
    const b = await turn('rt-1499321');
    assert.notEqual(a.agent, b.agent);
    assert.notEqual(a.namespace, b.namespace);
    const a2 = await turn('rt-1377755');
    assert.deepEqual(a2.remembered, [`turn 1 served by ${a.instance}`]);
    const b2 = await turn('rt-1499321');
    assert.deepEqual(b2.remembered, [`turn 1 served by ${b.instance}`], 'b sees only its own turn');
  });

  it('keys claim names with a secret generated once into <data>/gateway (0600), and the admin API needs the token', async () => {
    for (const name of ['claim.secret', 'session.secret', 'admin.token']) {
      const file = join(dir, 'data', 'gateway', name);
      assert.equal(statSync(file).mode & 0o777, 0o600, name);
      assert.ok(readFileSync(file, 'utf8').trim().length >= 32, name);
    }
    assert.equal(platform.adminTokenFile, join(dir, 'data', 'gateway', 'admin.token'));
    assert.equal((await fetch(`${platform.gateway.adminUrl}/_tether/sessions`)).status, 401);
  });

  it('reloads its manifests (SIGHUP): a new service in another namespace is served, its instances get that tenant', async () => {
    const extra = `---
apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: extra
  namespace: team-x
spec:
  template:
    metadata:
      annotations:
        serving.knative.dev/session-affinity-cookie: "agent"
    spec:
      containers:
        - command: ["node", ${JSON.stringify(resolve(ROOT, 'examples/session-app/server.mjs'))}]
`;
    writeFileSync(manifest, readFileSync(manifest, 'utf8') + extra);
    const result = await platform.gateway.reload();
    assert.deepEqual(result.added, ['extra']);
    assert.deepEqual(result.unchanged, ['memory-agent']);
    const status = await new Promise<number>((resolve, reject) => {
      http
        .get(
          platform.gateway.publicUrl,
          { headers: { host: 'extra.team-x.example.com', cookie: 'agent=z' } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        )
        .on('error', reject);
    });
    assert.equal(status, 200);
    const inst = (await instances()).find((i) => i.name.startsWith('extra-'));
    assert.ok(inst);
    const token = readFileSync(join(dir, 'data', 'instances', inst.name, 'token'), 'utf8');
    const r = await exchange(token);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal((r.body as { tenant?: string }).tenant, 'team-x');
  });
});
