/**
 * The double stores agent-sandbox objects as kube-apiserver does from the CRDs' structural schemas: defaults
 * filled in on every write (create, patch, the controllers' own writes), unknown fields pruned, a patch that
 * nulls a defaulted field a no-op, and a bad enum value 422 naming the field. Driven through the real client.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  apiVersionOf,
  SANDBOX,
  SANDBOX_CLAIM,
  SANDBOX_TEMPLATE,
  SANDBOX_WARM_POOL,
} from '../../src/kube/agent-sandbox.ts';
import { loadKubeConfig } from '../../src/kube/client.ts';
import { KubeRequestError } from '../../src/kube/errors.ts';
import { createObjectClient, type ObjectClient } from '../../src/kube/object-client.ts';
import type { KubeResource } from '../../src/kube/types.ts';
import { type KubeDouble, startKubeDouble } from './double.ts';
import { newMeta } from './objects.ts';

let kube: KubeDouble;
let client: ObjectClient;
before(async () => {
  kube = await startKubeDouble();
  client = createObjectClient(loadKubeConfig({ kubeconfig: kube.gatewayKubeconfigPath }), 5000);
});
after(() => kube.close());

const NS = 'agents';
const obj = (type: typeof SANDBOX, name: string, spec: Record<string, unknown>): KubeResource => ({
  apiVersion: apiVersionOf(type),
  kind: type.kind,
  metadata: { name, uid: '' },
  spec,
});

describe('KubeDouble CRD schemas', () => {
  it('fills in a SandboxTemplate’s defaults and a container port’s protocol, and prunes unknown fields', async () => {
    const stored = await client.create(
      SANDBOX_TEMPLATE,
      NS,
      obj(SANDBOX_TEMPLATE, 't1', {
        podTemplate: { spec: { containers: [{ name: 'app', image: 'x', ports: [{ containerPort: 80 }] }] } },
        bogus: 'dropped',
      }),
    );
    const spec = stored.spec as Record<string, any>;
    assert.equal(spec.envVarsInjectionPolicy, 'Disallowed');
    assert.equal(spec.networkPolicyManagement, 'Managed');
    assert.equal(spec.volumeClaimTemplatesPolicy, 'Disallowed');
    assert.equal(spec.bogus, undefined, 'pruned');
    assert.deepEqual(spec.podTemplate.spec.containers[0].ports, [{ containerPort: 80, protocol: 'TCP' }]);
    assert.deepEqual(await client.get(SANDBOX_TEMPLATE, NS, 't1'), stored);
  });

  it('a merge patch that nulls a defaulted field changes nothing: the default comes back, no new resourceVersion', async () => {
    const made = await client.create(SANDBOX_TEMPLATE, NS, obj(SANDBOX_TEMPLATE, 't2', { podTemplate: {} }));
    const rv = kube.store.resourceVersion;
    const patched = await client.patch(SANDBOX_TEMPLATE, NS, 't2', { spec: { envVarsInjectionPolicy: null } });
    assert.equal(patched?.spec?.envVarsInjectionPolicy, 'Disallowed');
    assert.equal(patched?.metadata.resourceVersion, made.metadata.resourceVersion);
    assert.equal(kube.store.resourceVersion, rv, 'nothing written');
  });

  it('defaults a pool’s replicas and updateStrategy.type, and a claim’s lifecycle.shutdownPolicy only inside lifecycle', async () => {
    const pool = await client.create(
      SANDBOX_WARM_POOL,
      NS,
      obj(SANDBOX_WARM_POOL, 'p1', { sandboxTemplateRef: { name: 't1' }, updateStrategy: {} }),
    );
    assert.deepEqual(pool.spec, {
      sandboxTemplateRef: { name: 't1' },
      updateStrategy: { type: 'OnReplenish' },
      replicas: 1,
    });
    const bare = await client.create(SANDBOX_CLAIM, NS, obj(SANDBOX_CLAIM, 'c1', { warmPoolRef: { name: 'p1' } }));
    assert.deepEqual(
      bare.spec,
      { warmPoolRef: { name: 'p1' } },
      'an absent object is not made by its fields’ defaults',
    );
    const timed = await client.create(
      SANDBOX_CLAIM,
      NS,
      obj(SANDBOX_CLAIM, 'c2', { warmPoolRef: { name: 'p1' }, lifecycle: { shutdownTime: '2030-01-01T00:00:00Z' } }),
    );
    assert.deepEqual((timed.spec as Record<string, unknown>).lifecycle, {
      shutdownTime: '2030-01-01T00:00:00Z',
      shutdownPolicy: 'Retain',
    });
  });

  it('defaults what the controllers write too: a Sandbox gets operatingMode Running and shutdownPolicy Retain', () => {
    const stored = kube.store.put(SANDBOX, {
      apiVersion: apiVersionOf(SANDBOX),
      kind: SANDBOX.kind,
      metadata: newMeta(NS, 's1'),
      spec: { podTemplate: { spec: { containers: [] } } },
    });
    assert.equal(stored.spec?.operatingMode, 'Running');
    assert.equal(stored.spec?.shutdownPolicy, 'Retain');
  });

  it('refuses a value outside an enum with 422 and stores nothing', async () => {
    kube.store.put(SANDBOX, { ...obj(SANDBOX, 's2', { podTemplate: {} }), metadata: newMeta(NS, 's2') });
    const err = await client.patch(SANDBOX, NS, 's2', { spec: { operatingMode: 'Paused' } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof KubeRequestError, String(err));
    assert.equal(err.status, 422);
    assert.equal(kube.calls.at(-1)?.status, 422);
    assert.equal(kube.store.get(SANDBOX, NS, 's2')?.spec?.operatingMode, 'Running');
  });
});
