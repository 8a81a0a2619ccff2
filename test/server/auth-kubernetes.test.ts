import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { kubernetesPlugins } from '../../src/cli/kubernetes-option.ts';
import { ManualClock } from '../../src/common/clock.ts';
import { silentLogger } from '../../src/common/log.ts';
import { kubeFlags } from '../helpers/kube-flags.ts';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';
import { type KubeDouble, startKubeDouble } from '../kube/double.ts';

let kube: KubeDouble;
let srv: TestMemoryServer;
const clock = new ManualClock(Date.now());

before(async () => {
  kube = await startKubeDouble();
  srv = await startTestMemoryServer({
    clock,
    plugins: kubernetesPlugins(kubeFlags(kube.kubeconfigPath), silentLogger()),
  });
});
after(async () => {
  await srv.close();
  await kube.close();
});

const exchange = (token: string) => srv.call('POST', '/v1/auth/kubernetes', { body: { token } });

describe('POST /v1/auth/kubernetes — the seed story', () => {
  it('refuses a warm-pool pod, then keys it once claim run-1 adopts it; a recreated claim gets its memory back; run-2 cannot read run-1', async () => {
    // (1) still in the warm pool
    const warm = kube.createWarmPoolPod();
    const token = kube.issueToken(warm);
    const refused = await exchange(token);
    assert.equal(refused.status, 401);
    assert.deepEqual(refused.body, { error: { code: 'warm_pool', message: 'still in warm pool' } });

    const adopted = kube.adoptWarmPod(warm, 'run-1');
    const ok = await exchange(token);
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(
      { tenant: ok.body.tenant, agent: ok.body.agent, session: ok.body.session, namespace: ok.body.namespace },
      { tenant: 'agents', agent: 'run-1', session: adopted.pod, namespace: 'agents:run-1' },
    );
    assert.match(ok.body.key, /^tth_[0-9a-f]{16}_[0-9a-f]{64}$/);

    // (2) remembers a preference twice
    const key1 = ok.body.key as string;
    const pref = { subject: 'user', predicate: 'prefers', value: 'dark mode' };
    const first = await srv.call('POST', '/v1/memories', { key: key1, body: pref });
    assert.equal(first.body.stored, true);
    assert.equal(first.body.event.actor.session, adopted.pod);
    const second = await srv.call('POST', '/v1/memories', { key: key1, body: pref });
    assert.equal(second.body.already_known, true);
    await srv.call('POST', '/v1/memories', { key: key1, body: { ...pref, value: 'short answers' } });

    // (3) the claim is deleted and created again under the same name
    kube.deleteClaim('run-1');
    const oldAgain = await exchange(token);
    assert.equal(oldAgain.status, 401);
    assert.equal(oldAgain.body.error.code, 'unauthenticated');
    const fresh = kube.createClaim('run-1');
    assert.notEqual(fresh.pod, adopted.pod);
    const ok2 = await exchange(kube.issueToken(fresh));
    assert.equal(ok2.status, 200, ok2.text);
    assert.equal(ok2.body.namespace, 'agents:run-1');
    const key2 = ok2.body.key as string;
    const recalled = await srv.call('GET', '/v1/memories?subject=user&predicate=prefers', { key: key2 });
    assert.deepEqual(recalled.body.beliefs.map((b: { value: string }) => b.value).sort(), [
      'dark mode',
      'short answers',
    ]);
    await srv.call('POST', '/v1/memories/forget', {
      key: key2,
      body: { subject: 'user', predicate: 'prefers', value: 'short answers' },
    });
    const history = await srv.call('GET', '/v1/memories/history?subject=user&predicate=prefers', { key: key2 });
    assert.deepEqual(
      [...new Set(history.body.events.map((e: { actor: { session: string } }) => e.actor.session))],
      [adopted.pod, fresh.pod],
    );

    // (4) run-2 cannot read run-1
    const other = kube.createClaim('run-2');
    const ok3 = await exchange(kube.issueToken(other));
    assert.equal(ok3.body.namespace, 'agents:run-2');
    const cross = await srv.call('GET', '/v1/memories?namespace=agents:run-1&subject=user', { key: ok3.body.key });
    assert.equal(cross.status, 403);
    assert.equal(cross.body.error.code, 'namespace_mismatch');
  });
});

describe('POST /v1/auth/kubernetes — refusals', () => {
  it('refuses a token for another audience', async () => {
    const pod = kube.createClaim('aud-1');
    const r = await exchange(kube.issueToken(pod, { audience: 'kubernetes' }));
    assert.equal(r.status, 401);
    assert.equal(r.body.error.code, 'unauthenticated');
  });

  it('refuses forged and expired tokens without echoing them', async () => {
    const pod = kube.createClaim('forge-1');
    const good = kube.issueToken(pod);
    const [h, p] = good.split('.');
    const forged = `${h}.${p}.${'A'.repeat(43)}`;
    const expired = kube.issueToken(pod, { expiresInSeconds: 0 });
    for (const t of [forged, expired, 'not-a-token']) {
      const r = await exchange(t);
      assert.equal(r.status, 401);
      assert.equal(r.body.error.code, 'unauthenticated');
      assert.ok(!r.text.includes(t));
    }
  });

  it('refuses the old pod of a claim whose name was reused', async () => {
    const old = kube.createClaim('reuse-1');
    const oldToken = kube.issueToken(old);
    kube.recreateClaim('reuse-1', { keepOldPod: true });
    const r = await exchange(oldToken);
    assert.equal(r.status, 401);
    assert.equal(r.body.error.code, 'unauthenticated');
  });

  it('caps the key at the token’s own expiry', async () => {
    const pod = kube.createClaim('short-1');
    const r = await exchange(kube.issueToken(pod, { expiresInSeconds: 120 }));
    assert.equal(r.status, 200);
    const expires = Date.parse(r.body.expires_at);
    assert.ok(expires <= Date.now() + 121_000, r.body.expires_at);
    assert.ok(expires < clock.now() + 15 * 60_000);
  });

  it('expires an exchanged key after its TTL and revokes it at once', async () => {
    const pod = kube.createClaim('ttl-1');
    const a = await exchange(kube.issueToken(pod));
    const b = await exchange(kube.issueToken(pod));
    assert.equal((await srv.call('GET', '/v1/whoami', { key: a.body.key })).body.session, pod.pod);
    const del = await srv.call('DELETE', `/v1/keys/${(a.body.key as string).slice(4, 20)}`, { key: srv.adminKey });
    assert.equal(del.status, 204);
    const revoked = await srv.call('GET', '/v1/whoami', { key: a.body.key });
    assert.equal(revoked.body.error.code, 'key_revoked');
    clock.advance(15 * 60_000 + 1);
    const expired = await srv.call('GET', '/v1/whoami', { key: b.body.key });
    assert.equal(expired.status, 401);
    assert.equal(expired.body.error.code, 'key_expired');
  });

  it('answers 429 with Retry-After when one pod exchanges too often', async () => {
    const pod = kube.createClaim('flood-1');
    const token = kube.issueToken(pod);
    let limited: Awaited<ReturnType<typeof exchange>> | undefined;
    for (let i = 0; i < 61 && !limited; i++) {
      const r = await exchange(token);
      if (r.status === 429) limited = r;
      else assert.equal(r.status, 200, `exchange ${i}: ${r.text}`);
    }
    assert.ok(limited, 'no 429 after 61 exchanges');
    assert.equal(limited.body.error.code, 'rate_limited');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
  });

  it('answers 503 with Retry-After when the API server is down or slow', async () => {
    const pod = kube.createClaim('down-1');
    const token = kube.issueToken(pod);
    await kube.goDown('refuse');
    try {
      const r = await exchange(token);
      assert.equal(r.status, 503);
      assert.equal(r.body.error.code, 'unavailable');
      assert.ok(Number(r.headers.get('retry-after')) >= 1);
    } finally {
      await kube.goUp();
    }
    // A slow API server: a server of its own with a short timeout (the subject here), so the other tests'
    // exchanges keep the generous default and never race it against a loaded machine.
    const impatient = await startTestMemoryServer({
      clock,
      plugins: kubernetesPlugins(kubeFlags(kube.kubeconfigPath, { kubernetesTimeout: '300ms' }), silentLogger()),
    });
    kube.setLatency(2000);
    try {
      const r = await impatient.call('POST', '/v1/auth/kubernetes', { body: { token } });
      assert.equal(r.status, 503);
      assert.equal(r.body.error.code, 'unavailable');
    } finally {
      kube.setLatency(0);
      await impatient.close();
    }
    assert.equal((await exchange(token)).status, 200);
  });

  it('refuses a malformed body with 400 naming the field', async () => {
    const r = await srv.call('POST', '/v1/auth/kubernetes', { body: { tok: 'x' } });
    assert.equal(r.status, 400);
    assert.match(r.body.error.message, /^tok: unknown field|^token:/);
  });
});

describe('workload identity configuration', () => {
  it('refuses to start with a kubeconfig that cannot be used, or a bad timeout', () => {
    assert.throws(() => kubernetesPlugins(kubeFlags('/nonexistent/kubeconfig'), silentLogger()), /nonexistent|ENOENT/);
    assert.throws(
      () => kubernetesPlugins(kubeFlags(kube.kubeconfigPath, { kubernetesTimeout: '0s' }), silentLogger()),
      /--kubernetes-timeout must be between 1ms and 10s: got 0s/,
    );
  });
});
