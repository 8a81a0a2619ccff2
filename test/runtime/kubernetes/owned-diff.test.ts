/**
 * `ownedPatch`: only the fields the gateway owns count. Server defaults (also inside list items) and other
 * writers' fields are left alone; a field the gateway wrote last time and dropped since is removed; an object
 * from an older gateway (no last-applied record) is not rewritten just to add the record.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeResource } from '../../../src/kube/types.ts';
import { LAST_APPLIED_ANNOTATION, ownedPatch, withLastApplied } from '../../../src/runtime/kubernetes/owned-diff.ts';

const obj = (spec: Record<string, unknown>, labels = { a: '1' }): KubeResource => ({
  apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
  kind: 'SandboxTemplate',
  metadata: { name: 't', uid: 'u', labels },
  spec,
});
/** What the server holds after the gateway wrote `written`, plus what the server added. */
const stored = (written: KubeResource, extra: Record<string, unknown>): KubeResource => {
  const w = withLastApplied(written);
  return {
    ...w,
    metadata: { ...w.metadata, labels: { ...w.metadata.labels, other: 'x' } },
    spec: { ...w.spec, ...extra },
  };
};

describe('ownedPatch', () => {
  const want = obj({ podTemplate: { spec: { containers: [{ name: 'app', ports: [{ containerPort: 80 }] }] } } });

  it('is undefined when only the server added fields (top level, inside list items, labels)', () => {
    const have = stored(want, {
      envVarsInjectionPolicy: 'Disallowed',
      podTemplate: { spec: { containers: [{ name: 'app', ports: [{ containerPort: 80, protocol: 'TCP' }] }] } },
    });
    assert.equal(ownedPatch(have, want), undefined);
  });

  it('sends a changed scalar, a changed list whole, and the new record with them', () => {
    const next = obj({ replicas: 2, podTemplate: { spec: { containers: [{ name: 'app', image: 'b' }] } } });
    const have = stored(obj({ replicas: 1, podTemplate: { spec: { containers: [{ name: 'app' }] } } }), {
      networkPolicyManagement: 'Managed',
    });
    const patch = ownedPatch(have, next);
    assert.deepEqual(patch?.spec, {
      replicas: 2,
      podTemplate: { spec: { containers: [{ name: 'app', image: 'b' }] } },
    });
    assert.deepEqual(patch?.metadata, {
      annotations: { [LAST_APPLIED_ANNOTATION]: JSON.stringify(next.spec) },
    });
  });

  it('removes a field it wrote last time and wants no more, in an object (null) or a list item (list resent)', () => {
    const before = obj({ service: true, podTemplate: { spec: { containers: [{ name: 'app', workingDir: '/w' }] } } });
    const after = obj({ podTemplate: { spec: { containers: [{ name: 'app' }] } } });
    const patch = ownedPatch(stored(before, {}), after);
    assert.deepEqual(patch?.spec, { service: null, podTemplate: { spec: { containers: [{ name: 'app' }] } } });
  });

  it('does not rewrite an object with no last-applied record when its owned fields hold', () => {
    const legacy = { ...want, metadata: { ...want.metadata }, spec: { ...want.spec, extra: 1 } };
    assert.equal(ownedPatch(legacy, want), undefined);
  });

  it('puts back a label of its own that was changed', () => {
    const have = stored(want, {});
    have.metadata.labels = { a: '2' };
    assert.deepEqual(ownedPatch(have, want)?.metadata, {
      labels: { a: '1' },
      annotations: { [LAST_APPLIED_ANNOTATION]: JSON.stringify(want.spec) },
    });
  });
});
