/**
 * The Kubernetes runtime's resync against the API double, which fills in the CRDs' defaults as a real API
 * server does: a pass over unchanged manifests writes nothing (requests counted by verb), a manifest change
 * sends exactly one patch holding what changed (a field the manifest dropped is removed), fields only the
 * server or another writer set are left alone, and a field the server does not keep is patched once, not forever.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../../src/common/clock.ts';
import { createLogger, type Logger, silentLogger } from '../../../src/common/log.ts';
import { parseManifestText } from '../../../src/gateway/services/load-services.ts';
import { runtimeServiceSpecs } from '../../../src/gateway/services/runtime-spec.ts';
import { SANDBOX_TEMPLATE, SANDBOX_WARM_POOL } from '../../../src/kube/agent-sandbox.ts';
import { loadKubeConfig } from '../../../src/kube/client.ts';
import { createObjectClient, type ObjectClient } from '../../../src/kube/object-client.ts';
import type { KubeResource } from '../../../src/kube/types.ts';
import { KubernetesRuntime } from '../../../src/runtime/kubernetes/kubernetes-runtime.ts';
import { type KubeDouble, startKubeDouble } from '../../kube/double.ts';
import { kubeServiceYaml } from './helpers.ts';

let kube: KubeDouble;
before(async () => {
  kube = await startKubeDouble();
});
after(() => kube.close());

const NS = 'agents';
const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete']);
const writes = () => kube.calls.filter((c) => WRITE_VERBS.has(c.verb));
const probe = '          readinessProbe:\n            httpGet:\n              path: /ready\n';
const parse = (yaml: string) =>
  runtimeServiceSpecs(parseManifestText(yaml, '/tmp/sync.yaml', { runtime: 'kubernetes' }));

/**
 * A runtime whose resync runs only when the test asks (`resyncNow`), closed after the test.
 * @param wrap changes the object client (a server that prunes what the gateway sends)
 */
async function startRuntime(
  t: { after: (fn: () => Promise<void>) => void },
  yaml: string,
  {
    wrap = (c: ObjectClient) => c,
    log = silentLogger(),
  }: { wrap?: (c: ObjectClient) => ObjectClient; log?: Logger } = {},
) {
  const kubeconfig = loadKubeConfig({ kubeconfig: kube.gatewayKubeconfigPath });
  const runtime = new KubernetesRuntime({
    kubeconfig,
    client: wrap(createObjectClient(kubeconfig, 5000)),
    namespace: NS,
    services: parse(yaml),
    log,
    clock: new ManualClock(Date.now()),
    resyncMs: 3_600_000,
  });
  t.after(() => runtime.close());
  await runtime.synced();
  return runtime;
}

describe('Kubernetes runtime resync', () => {
  it('writes nothing over unchanged manifests, though the server filled in defaults', async (t) => {
    const yaml = kubeServiceYaml('quiet', { 'serving.knative.dev/warm-pool': '2' }, probe).concat(
      '---\n',
      kubeServiceYaml('still', { 'serving.knative.dev/sandbox-idle-policy': 'pause' }),
    );
    const runtime = await startRuntime(t, yaml);
    const template = kube.store.get(SANDBOX_TEMPLATE, NS, 'quiet');
    assert.equal(template?.spec?.envVarsInjectionPolicy, 'Disallowed', 'the double defaulted the template');
    assert.equal(template?.spec?.networkPolicyManagement, 'Managed');
    kube.resetCalls();
    for (let i = 0; i < 3; i++) await runtime.resyncNow();
    assert.deepEqual(writes(), []);
    assert.equal(kube.countCalls({ verb: 'list' }), 6, 'two lists a pass');
    assert.equal(kube.countCalls({ verb: 'get' }), 0);
  });

  it('sends exactly one patch of what changed when a manifest changes, and removes a field it dropped', async (t) => {
    const runtime = await startRuntime(t, kubeServiceYaml('moving', { 'serving.knative.dev/warm-pool': '1' }, probe));
    kube.resetCalls();
    runtime.setServices(parse(kubeServiceYaml('moving', { 'serving.knative.dev/warm-pool': '3' }, probe)));
    await runtime.resyncNow();
    await runtime.resyncNow();
    const [patch, ...rest] = writes();
    assert.deepEqual(rest, []);
    assert.equal(patch?.verb, 'patch');
    assert.equal(patch?.resource, 'sandboxwarmpools');
    const body = patch?.body as { spec: unknown; metadata: { annotations: Record<string, string> } };
    assert.deepEqual(body.spec, { replicas: 3 });
    assert.deepEqual(Object.keys(body.metadata), ['annotations'], 'only the record of what the gateway wrote');
    assert.equal(kube.store.get(SANDBOX_WARM_POOL, NS, 'moving')?.spec?.replicas, 3);

    // The manifest drops its readiness probe: the one template patch sends the containers without it.
    kube.resetCalls();
    runtime.setServices(parse(kubeServiceYaml('moving', { 'serving.knative.dev/warm-pool': '3' })));
    await runtime.resyncNow();
    await runtime.resyncNow();
    assert.deepEqual(
      writes().map((c) => `${c.verb} ${c.resource}/${c.name}`),
      ['patch sandboxtemplates/moving'],
    );
    const stored = kube.store.get(SANDBOX_TEMPLATE, NS, 'moving')?.spec as {
      podTemplate: { spec: { containers: { readinessProbe?: unknown; ports: { protocol: string }[] }[] } };
    };
    const [container] = stored.podTemplate.spec.containers;
    assert.equal(container?.readinessProbe, undefined);
    assert.equal(container?.ports[0]?.protocol, 'TCP', 'defaults inside the list kept');
  });

  it('leaves alone a field another writer set that the gateway does not own', async (t) => {
    const runtime = await startRuntime(t, kubeServiceYaml('shared', {}));
    const pool = kube.store.get(SANDBOX_WARM_POOL, NS, 'shared')!;
    kube.store.update(SANDBOX_WARM_POOL, { ...pool, spec: { ...pool.spec, updateStrategy: { type: 'Recreate' } } });
    kube.resetCalls();
    await runtime.resyncNow();
    assert.deepEqual(writes(), []);
    assert.deepEqual(kube.store.get(SANDBOX_WARM_POOL, NS, 'shared')?.spec?.updateStrategy, { type: 'Recreate' });
  });

  it('patches once, then warns, when the server does not keep a field the gateway writes (an older CRD)', async (t) => {
    // A server whose template CRD has no `networkPolicy`: it drops it from everything it returns.
    const prune = (o: KubeResource | null) => {
      if (o?.kind !== 'SandboxTemplate' || !o.spec) return o;
      const { networkPolicy: _, ...spec } = o.spec;
      return { ...o, spec };
    };
    const older = (c: ObjectClient): ObjectClient => ({
      ...c,
      get: async (...a) => prune(await c.get(...a)),
      list: async (...a) => {
        const l = await c.list(...a);
        return { ...l, items: l.items.map((o) => prune(o)!) };
      },
      patch: async (...a) => prune(await c.patch(...a)),
    });
    const lines: { level: number; msg: string }[] = [];
    const log = createLogger({ format: 'json', destination: { write: (l: string) => lines.push(JSON.parse(l)) } });
    const runtime = await startRuntime(t, kubeServiceYaml('older', {}), { wrap: older, log });
    kube.resetCalls();
    for (let i = 0; i < 3; i++) await runtime.resyncNow();
    assert.deepEqual(
      writes().map((c) => `${c.verb} ${c.resource}/${c.name}`),
      ['patch sandboxtemplates/older'],
    );
    assert.ok(lines.some((l) => l.level === 40 && /did not keep what the gateway wrote/.test(l.msg)));
  });
});
