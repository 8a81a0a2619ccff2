/**
 * The Kubernetes runtime across a gateway restart and API-server failures: a new gateway (no Redis) finds
 * a session's claim and routes it to the same sandbox; an API server that answers 500 or does not answer
 * gives 503 + Retry-After to the requests that need it, and the gateway serves again once it is back.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { send, waitFor } from '../../gateway/helpers/harness.ts';
import { type KubeDouble, startKubeDouble } from '../../kube/double.ts';
import { claimsOf, kubeServiceYaml, startKubeGateway } from './helpers.ts';

let kube: KubeDouble;
before(async () => {
  kube = await startKubeDouble({ controllers: true });
});
after(() => kube.close());

const claims = (service: string) => claimsOf(kube, service);

describe('Kubernetes runtime: restart and API errors', () => {
  it('a restarted gateway rebuilds the binding from the claim: same claim, same pod', async (t) => {
    const yaml = kubeServiceYaml('rs', {});
    const first = await startKubeGateway(t, kube, yaml);
    const a = await send(first.gw.publicUrl, { host: first.host('rs'), path: '/env', headers: { cookie: 'app=r1' } });
    assert.equal(a.status, 200, a.body);
    const [claim] = claims('rs');
    await first.gw.close();
    assert.equal(claims('rs').length, 1, 'claims outlive the gateway');

    const second = await startKubeGateway(t, kube, yaml);
    const b = await send(second.gw.publicUrl, { host: second.host('rs'), path: '/env', headers: { cookie: 'app=r1' } });
    assert.equal(b.status, 200, b.body);
    assert.equal(JSON.parse(b.body).pid, JSON.parse(a.body).pid, 'the same pod');
    assert.equal(JSON.parse(b.body).count, 2);
    const now = claims('rs');
    assert.equal(now.length, 1);
    assert.equal(now[0]!.metadata.uid, claim!.metadata.uid);
  });

  it('a restarted gateway deletes, after session-timeout, the claim of a session that never came back (delete mode)', async (t) => {
    const yaml = kubeServiceYaml('gone', { 'serving.knative.dev/session-timeout': '10s' });
    const first = await startKubeGateway(t, kube, yaml);
    const r = await send(first.gw.publicUrl, { host: first.host('gone'), headers: { cookie: 'app=g1' } });
    assert.equal(r.status, 200);
    await first.gw.close();
    assert.equal(claims('gone').length, 1);
    const second = await startKubeGateway(t, kube, yaml);
    // The resync (every 200 ms here) notes the orphan on its first pass that sees it, then its idle time runs on
    // the injected clock: advance it past session-timeout until the claim goes.
    await waitFor(
      'the claim deleted',
      () => {
        second.clock.advance(11_000);
        return claims('gone').length === 0;
      },
      { intervalMs: 50 },
    );
  });

  for (const [what, fail] of [
    ['answers 500', () => kube.goDown('error', 500)],
    ['hangs', () => kube.setLatency(Number.POSITIVE_INFINITY)],
  ] as const) {
    it(`gives 503 + Retry-After to a new session while the API server ${what}, and serves once it is back`, async (t) => {
      const { gw, host } = await startKubeGateway(t, kube, kubeServiceYaml(`down-${what.length}`, {}), {
        requestTimeoutMs: 300,
        startTimeoutMs: 2000,
      });
      const svc = `down-${what.length}`;
      await fail();
      try {
        const r = await send(gw.publicUrl, { host: host(svc), path: '/env', headers: { cookie: 'app=x1' } });
        assert.equal(r.status, 503, r.body);
        assert.match(String(r.headers['retry-after']), /^\d+$/);
        assert.equal(JSON.parse(r.body).error.code, 'unavailable');
      } finally {
        kube.setLatency(0);
        await kube.goUp();
      }
      // Back: a new request gets its sandbox (the instance start back-off is per service and short).
      await waitFor(
        'a 200 once the API server is back',
        async () =>
          (await send(gw.publicUrl, { host: host(svc), path: '/env', headers: { cookie: 'app=x1' } })).status === 200,
        { intervalMs: 100 },
      );
    });
  }
});
