/**
 * `tether gateway --runtime kubernetes` against the API double and its agent-sandbox controllers: each
 * session is a SandboxClaim named with its claim name and labelled with a hash of its key; requests reach
 * the claim's pod (a real process on its own loopback address); a warm-pool sandbox is adopted and the pool
 * refills; idle pause suspends and the next request resumes on a new pod; delete mode and an outside delete
 * end the claim.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseManifestText } from '../../../src/gateway/services/load-services.ts';
import { runtimeServiceSpecs } from '../../../src/gateway/services/runtime-spec.ts';
import { SANDBOX, SANDBOX_CLAIM, SANDBOX_TEMPLATE, SANDBOX_WARM_POOL } from '../../../src/kube/agent-sandbox.ts';
import { LABELS } from '../../../src/runtime/kubernetes/objects.ts';
import { sessionKeyHash } from '../../../src/sessions/session-hash.ts';
import { send, waitFor } from '../../gateway/helpers/harness.ts';
import { type KubeDouble, startKubeDouble } from '../../kube/double.ts';
import type { WireObject } from '../../kube/objects.ts';
import { claimsOf, kubeServiceYaml, POD_PORT, startKubeGateway, untilStore } from './helpers.ts';

let kube: KubeDouble;
before(async () => {
  kube = await startKubeDouble({ controllers: true });
});
after(() => kube.close());

const NS = 'agents';
const claims = (service: string) => claimsOf(kube, service);
const ready = (o: WireObject | undefined) =>
  (o?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.find(
    (c) => c.type === 'Ready',
  )?.status === 'True';
const sandboxOf = (claim: WireObject) =>
  kube.store.get(SANDBOX, NS, claim.metadata.annotations?.['agents.x-k8s.io/sandbox-name'] ?? '');

describe('Kubernetes runtime', () => {
  it('gives two sessions two claims (named by claim, labelled by key hash) and proxies each to its own pod', async (t) => {
    const { gw, host } = await startKubeGateway(t, kube, kubeServiceYaml('two', {}));
    const a = await send(gw.publicUrl, { host: host('two'), path: '/env', headers: { cookie: 'app=alice' } });
    const b = await send(gw.publicUrl, { host: host('two'), path: '/env', headers: { cookie: 'app=bob' } });
    assert.equal(a.status, 200, a.body);
    assert.equal(b.status, 200, b.body);
    const [ea, eb] = [JSON.parse(a.body), JSON.parse(b.body)];
    assert.notEqual(ea.pid, eb.pid);
    assert.equal(ea.env.PORT, String(POD_PORT));
    assert.equal(ea.env.K_SERVICE, 'two');
    const made = claims('two');
    assert.equal(made.length, 2);
    const hashes = made.map((c) => c.metadata.labels?.[LABELS.sessionHash]).sort();
    assert.deepEqual(hashes, [sessionKeyHash('alice'), sessionKeyHash('bob')].sort());
    for (const c of made) {
      assert.match(c.metadata.name, /^two-[0-9a-f]{32}$/);
      assert.equal(c.metadata.labels?.['app.kubernetes.io/managed-by'], 'tether-gateway');
      assert.ok(!JSON.stringify(c).includes('alice') && !JSON.stringify(c).includes('bob'), 'no raw key');
      assert.equal((c.spec as { env?: unknown }).env, undefined, 'a claim with env would skip the warm pool');
    }
    // The same session comes back to the same pod.
    const again = await send(gw.publicUrl, { host: host('two'), path: '/env', headers: { cookie: 'app=alice' } });
    assert.equal(JSON.parse(again.body).pid, ea.pid);
    assert.equal(JSON.parse(again.body).count, 2);
  });

  it('makes a template and a warm pool per service; a new session adopts a Ready pool sandbox and the pool refills', async (t) => {
    const { gw, host } = await startKubeGateway(
      t,
      kube,
      kubeServiceYaml('warm', { 'serving.knative.dev/warm-pool': '1' }),
    );
    const template = kube.store.get(SANDBOX_TEMPLATE, NS, 'warm');
    assert.ok(template, 'SandboxTemplate warm');
    const pool = kube.store.get(SANDBOX_WARM_POOL, NS, 'warm')!;
    assert.deepEqual(pool.spec, { replicas: 1, sandboxTemplateRef: { name: 'warm' } });
    const ownedByPool = () =>
      kube.store
        .list(SANDBOX, { namespace: NS })
        .filter((s) => s.metadata.ownerReferences?.some((r) => r.uid === pool.metadata.uid) && ready(s));
    const [warm] = await untilStore(kube, 'a ready pool sandbox', () =>
      ownedByPool().length === 1 ? ownedByPool() : undefined,
    );
    const r = await send(gw.publicUrl, { host: host('warm'), path: '/env', headers: { cookie: 'app=w1' } });
    assert.equal(r.status, 200, r.body);
    const [claim] = claims('warm');
    assert.equal(claim!.metadata.annotations?.['agents.x-k8s.io/sandbox-name'], warm!.metadata.name);
    const refill = await untilStore(kube, 'the pool to refill', () => {
      const now = ownedByPool();
      return now.length === 1 && now[0]!.metadata.name !== warm!.metadata.name ? now[0] : undefined;
    });
    assert.ok(refill);
  });

  it('pauses an idle session by suspending its sandbox; the next request resumes it (same claim, new pod)', async (t) => {
    const { gw, host, clock } = await startKubeGateway(
      t,
      kube,
      kubeServiceYaml('idle', {
        'serving.knative.dev/sandbox-idle-policy': 'pause',
        'serving.knative.dev/session-timeout': '30s',
      }),
    );
    const first = await send(gw.publicUrl, { host: host('idle'), path: '/env', headers: { cookie: 'app=p1' } });
    const before = JSON.parse(first.body);
    const [claim] = claims('idle');
    clock.advance(31_000);
    gw.reconcile();
    await untilStore(kube, 'the sandbox to be suspended', () => {
      const s = sandboxOf(claim!);
      const suspended = (s?.status as { conditions?: { type: string; status: string }[] })?.conditions?.find(
        (c) => c.type === 'Suspended',
      );
      return suspended?.status === 'True' ? true : undefined;
    });
    const sessions = await send(gw.adminUrl, { path: '/_tether/sessions' });
    assert.match(sessions.body, /"state":"paused"/);
    const next = await send(gw.publicUrl, { host: host('idle'), path: '/env', headers: { cookie: 'app=p1' } });
    assert.equal(next.status, 200, next.body);
    const after = JSON.parse(next.body);
    assert.notEqual(after.pid, before.pid, 'a pause keeps volumes, not processes: a new pod');
    assert.equal(after.count, 1);
    const now = claims('idle');
    assert.equal(now.length, 1);
    assert.equal(now[0]!.metadata.uid, claim!.metadata.uid, 'the same claim');
  });

  it('deletes the claim of an idle session in delete mode', async (t) => {
    const { gw, host, clock } = await startKubeGateway(
      t,
      kube,
      kubeServiceYaml('del', { 'serving.knative.dev/session-timeout': '10s' }),
    );
    assert.equal((await send(gw.publicUrl, { host: host('del'), headers: { cookie: 'app=d1' } })).status, 200);
    assert.equal(claims('del').length, 1);
    clock.advance(11_000);
    gw.reconcile();
    await untilStore(kube, 'the claim to be deleted', () => (claims('del').length === 0 ? true : undefined));
  });

  it('follows the manifests: a changed warm pool is patched, a removed service loses its template, pool and claims', async (t) => {
    const yaml = kubeServiceYaml('keep', {}).concat('---\n', kubeServiceYaml('drop', {}));
    const { gw, host, runtime } = await startKubeGateway(t, kube, yaml);
    assert.equal((await send(gw.publicUrl, { host: host('drop'), headers: { cookie: 'app=x' } })).status, 200);
    assert.equal(claims('drop').length, 1);
    const next = parseManifestText(kubeServiceYaml('keep', { 'serving.knative.dev/warm-pool': '2' }), '/x.yaml', {
      runtime: 'kubernetes',
    });
    runtime.setServices(runtimeServiceSpecs(next));
    await untilStore(kube, 'the pool patched and the dropped service gone', () => {
      const pool = kube.store.get(SANDBOX_WARM_POOL, NS, 'keep');
      const gone =
        !kube.store.get(SANDBOX_TEMPLATE, NS, 'drop') &&
        !kube.store.get(SANDBOX_WARM_POOL, NS, 'drop') &&
        claims('drop').length === 0;
      return (pool?.spec as { replicas?: number } | undefined)?.replicas === 2 && gone ? true : undefined;
    });
  });

  it('ends the session when its claim is deleted from outside; the next request gets a new claim', async (t) => {
    const { gw, host } = await startKubeGateway(t, kube, kubeServiceYaml('ext', {}));
    const first = await send(gw.publicUrl, { host: host('ext'), path: '/env', headers: { cookie: 'app=e1' } });
    const [claim] = claims('ext');
    kube.store.delete(SANDBOX_CLAIM, NS, claim!.metadata.name);
    const gone = async () => JSON.parse((await send(gw.adminUrl, { path: '/_tether/sessions' })).body).length === 0;
    await waitFor('the session to end', gone);
    assert.ok(await gone(), 'the session ended');
    const next = await send(gw.publicUrl, { host: host('ext'), path: '/env', headers: { cookie: 'app=e1' } });
    assert.equal(next.status, 200, next.body);
    assert.notEqual(JSON.parse(next.body).pid, JSON.parse(first.body).pid);
    const [fresh] = claims('ext');
    assert.equal(fresh!.metadata.name, claim!.metadata.name, 'the same claim name: the agent keeps its memory');
    assert.notEqual(fresh!.metadata.uid, claim!.metadata.uid);
  });
});
