import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kubernetesPlugins } from '../../src/cli/kubernetes-option.ts';
import { ManualClock } from '../../src/common/clock.ts';
import { TetherError } from '../../src/common/errors.ts';
import { silentLogger } from '../../src/common/log.ts';
import { errorOf, TetherClient } from '../../src/sdk/client.ts';
import { kubeFlags } from '../helpers/kube-flags.ts';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';
import { type KubeDouble, startKubeDouble } from '../kube/double.ts';

let kube: KubeDouble;
let srv: TestMemoryServer;
let dir: string;
const clock = new ManualClock(Date.now());

before(async () => {
  kube = await startKubeDouble();
  dir = mkdtempSync(join(tmpdir(), 'tether-sdk-'));
  srv = await startTestMemoryServer({
    clock,
    plugins: kubernetesPlugins(kubeFlags(kube.kubeconfigPath), silentLogger()),
  });
});
after(async () => {
  await srv.close();
  await kube.close();
  rmSync(dir, { recursive: true, force: true });
});

const reviews = () => kube.countCalls({ resource: 'tokenreviews' });

describe('TetherClient.fromWorkloadToken', () => {
  it('exchanges once, reuses the key, re-reads the rotated token file on key_expired', async () => {
    const pod = kube.createClaim('sdk-1');
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, `${kube.issueToken(pod)}\n`);
    const client = TetherClient.fromWorkloadToken({ url: srv.url, tokenFile });
    const start = reviews();
    const me = await client.whoami();
    assert.deepEqual([me.namespace, me.session], ['agents:sdk-1', pod.pod]);
    await client.remember({ subject: 'user', predicate: 'prefers', value: 'tabs' });
    assert.equal(reviews() - start, 1);

    // the kubelet rotates the token; the key then expires on the server's clock
    writeFileSync(tokenFile, kube.issueToken(pod));
    clock.advance(15 * 60_000 + 1);
    const { beliefs } = await client.recall({ subject: 'user', predicate: 'prefers' });
    assert.deepEqual(
      beliefs.map((b) => b.value),
      ['tabs'],
    );
    assert.equal(reviews() - start, 2);
  });

  it('exchanges again before the key expires, but not on every call for a short-lived key', async () => {
    clock.set(Date.now()); // tokens are minted on the real clock
    const pod = kube.createClaim('sdk-2');
    const tokenFile = join(dir, 'token2');
    writeFileSync(tokenFile, kube.issueToken(pod, { expiresInSeconds: 90 }));
    // keys live 90 s here (capped by the token); the client's own clock is moved by hand
    let now = Date.now();
    const client = TetherClient.fromWorkloadToken({ url: srv.url, tokenFile, now: () => now });
    const start = reviews();
    for (let i = 0; i < 5; i++) await client.whoami();
    assert.equal(reviews() - start, 1, 'a 90 s key with the default 60 s margin is reused, not exchanged per call');
    now += 50_000; // past half its life: refreshed before it expires
    await client.whoami();
    assert.equal(reviews() - start, 2);
  });

  it('exports with a re-exchanged key once the old one expired, as every other call', async () => {
    clock.set(Date.now());
    const pod = kube.createClaim('sdk-4');
    const tokenFile = join(dir, 'token4');
    writeFileSync(tokenFile, kube.issueToken(pod));
    const client = TetherClient.fromWorkloadToken({ url: srv.url, tokenFile, now: () => clock.now() - 60 * 60_000 });
    await client.remember({ subject: 'user', predicate: 'prefers', value: 'tea' });
    const start = reviews();
    writeFileSync(tokenFile, kube.issueToken(pod));
    clock.advance(15 * 60_000 + 1); // the server's clock: the key has expired, the client does not know yet
    const events = await client.exportEvents();
    assert.deepEqual(
      events.map((e) => e.value),
      ['tea'],
    );
    assert.equal(reviews() - start, 1, 'exchanged again once');
  });

  it('surfaces warm_pool as a TetherError', async () => {
    const warm = kube.createWarmPoolPod();
    const tokenFile = join(dir, 'token3');
    writeFileSync(tokenFile, kube.issueToken(warm));
    const client = TetherClient.fromWorkloadToken({ url: srv.url, tokenFile });
    await assert.rejects(
      client.whoami(),
      (err: unknown) => err instanceof TetherError && err.code === 'warm_pool' && err.status === 401,
    );
  });
});

describe('errorOf', () => {
  it('takes the code from the status when the body is not a wire error (a proxy page)', async () => {
    const page = (status: number) =>
      new Response('<html>nope</html>', { status, headers: { 'content-type': 'text/html' } });
    for (const [status, code] of [
      [404, 'not_found'],
      [403, 'forbidden'],
      [429, 'rate_limited'],
      [502, 'bad_gateway'],
      [418, 'invalid_request'],
      [504, 'unavailable'],
    ] as const) {
      const err = await errorOf(page(status));
      assert.equal(err.code, code, String(status));
    }
    const wire = await errorOf(
      new Response(JSON.stringify({ error: { code: 'lease_held', message: 'held by pod-1' } }), { status: 409 }),
    );
    assert.deepEqual([wire.code, wire.status, wire.message], ['lease_held', 409, 'held by pod-1']);
  });
});

describe('TetherClient.fromKey', () => {
  it('covers every memory call with typed results', async () => {
    const client = TetherClient.fromKey({ url: srv.url, key: await srv.agentKey('agents', 'sdk-k') });
    const r = await client.remember({ subject: 'Ada', predicate: 'lives_in', value: 'London' });
    assert.equal(r.stored, true);
    const batch = await client.rememberAll([
      { subject: 'ada', predicate: 'lives_in', value: 'Paris' },
      { subject: 'ada', predicate: 'allergy', value: 'cats' },
    ]);
    assert.deepEqual(batch.results[0]?.superseded, ['London']);
    assert.equal((await client.recall({ q: 'paris' })).beliefs[0]?.value, 'Paris');
    assert.equal((await client.history('ada', 'lives_in')).events.length, 2);
    assert.deepEqual(await client.forget({ subject: 'ada', predicate: 'allergy' }), { withdrawn: 1 });
    assert.ok((await client.registry()).predicates.some((p) => p.name === 'note'));
    assert.equal((await client.exportEvents()).length, 4);
    await assert.rejects(
      client.recall({ namespace: 'agents:other', subject: 'ada' }),
      (err: unknown) => err instanceof TetherError && err.code === 'namespace_mismatch' && err.status === 403,
    );
  });
});
