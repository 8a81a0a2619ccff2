/**
 * `describeWait` names what the cluster has not done from the objects as observed: a claim not seen or not
 * bound (with its condition's reason), a mode change the controller has not observed, a Sandbox not Ready
 * (pointing at the pod) or not Suspended.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeCondition, KubeResource } from '../../../src/kube/types.ts';
import { describeWait } from '../../../src/runtime/kubernetes/wait-reason.ts';

const claim = (sandbox?: string, conditions: KubeCondition[] = []): KubeResource => ({
  apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
  kind: 'SandboxClaim',
  metadata: {
    name: 'run-1',
    uid: 'c',
    ...(sandbox ? { annotations: { 'agents.x-k8s.io/sandbox-name': sandbox } } : {}),
  },
  status: { conditions },
});
const sandbox = (mode: string, generation: number, conditions: KubeCondition[]): KubeResource => ({
  apiVersion: 'agents.x-k8s.io/v1beta1',
  kind: 'Sandbox',
  metadata: { name: 'sb-1', uid: 's', generation },
  spec: { operatingMode: mode },
  status: { conditions },
});
const cond = (type: string, status: 'True' | 'False', observedGeneration: number, reason = 'R'): KubeCondition => ({
  type,
  status,
  reason,
  observedGeneration,
});

describe('describeWait', () => {
  it('names a claim the watch has not seen, and one not bound with the reason the controller gave', () => {
    assert.equal(describeWait('ready', 'run-1', undefined, undefined, 0).what, 'claim run-1 not seen by the watch');
    const w = describeWait(
      'ready',
      'run-1',
      claim(undefined, [cond('Ready', 'False', 1, 'WarmPoolNotFound')]),
      undefined,
      5,
    );
    assert.deepEqual(w, {
      what: 'claim run-1 not bound',
      reason: 'WarmPoolNotFound',
      hint: 'is the agent-sandbox controller running?',
      since: 5,
    });
  });

  it('names a change of operatingMode no condition has caught up with', () => {
    const s = sandbox('Running', 3, [cond('Ready', 'False', 2), cond('Suspended', 'True', 2)]);
    assert.equal(
      describeWait('ready', 'run-1', claim('sb-1'), s, 0).what,
      'sandbox sb-1 change to operatingMode Running not observed',
    );
  });

  it('names a Sandbox not Ready (pointing at its pod) and one not Suspended', () => {
    const starting = sandbox('Running', 1, [cond('Ready', 'False', 1, 'DependenciesNotReady')]);
    const ready = describeWait('ready', 'run-1', claim('sb-1'), starting, 0);
    assert.equal(ready.what, 'sandbox sb-1 not Ready');
    assert.equal(ready.reason, 'DependenciesNotReady');
    assert.match(ready.hint, /kubectl describe pod/);
    const stopping = sandbox('Suspended', 2, [cond('Suspended', 'False', 2, 'PodTerminating')]);
    assert.equal(describeWait('suspended', 'run-1', claim('sb-1'), stopping, 0).what, 'sandbox sb-1 not Suspended');
  });
});
