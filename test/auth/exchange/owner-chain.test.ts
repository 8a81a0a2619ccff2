/**
 * Table tests of the pure owner chain Pod -> Sandbox -> SandboxClaim over hand-built objects.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ChainState, type ChainStep, evaluateOwnerChain } from '../../../src/auth/exchange/owner-chain.ts';
import { POD, SANDBOX, SANDBOX_CLAIM } from '../../../src/kube/agent-sandbox.ts';
import type { KubeObject, OwnerReference } from '../../../src/kube/types.ts';

const NS = 'agents';

function obj(
  apiVersion: string,
  kind: string,
  name: string,
  uid: string,
  refs?: OwnerReference[],
  deleting = false,
): KubeObject {
  return {
    apiVersion,
    kind,
    metadata: {
      name,
      namespace: NS,
      uid,
      ...(refs ? { ownerReferences: refs } : {}),
      ...(deleting ? { deletionTimestamp: '2026-11-30T08:00:00Z' } : {}),
    },
  };
}
function ref(apiVersion: string, kind: string, name: string, uid: string, controller = true): OwnerReference {
  return { apiVersion, kind, name, uid, controller, blockOwnerDeletion: true };
}

const claimRef = ref('extensions.agents.x-k8s.io/v1beta1', 'SandboxClaim', 'run-1', 'claim-uid');
const poolRef = ref('extensions.agents.x-k8s.io/v1beta1', 'SandboxWarmPool', 'tether-agents', 'pool-uid');
const sandboxRef = ref('agents.x-k8s.io/v1beta1', 'Sandbox', 'sb-1', 'sandbox-uid');
const pod = obj('v1', 'Pod', 'sb-1', 'pod-uid', [sandboxRef]);
const sandbox = obj('agents.x-k8s.io/v1beta1', 'Sandbox', 'sb-1', 'sandbox-uid', [claimRef]);
const claim = obj('extensions.agents.x-k8s.io/v1beta1', 'SandboxClaim', 'run-1', 'claim-uid');
const base: ChainState = { namespace: NS, podName: 'sb-1', podUid: 'pod-uid' };
const full: ChainState = { ...base, pod, sandbox, claim };

function refusedWith(step: ChainStep, code: string, pattern: RegExp): void {
  assert.equal(step.kind, 'refused', JSON.stringify(step));
  if (step.kind !== 'refused') return;
  assert.equal(step.code, code);
  assert.match(step.reason, pattern);
}

describe('evaluateOwnerChain()', () => {
  describe('asks for the next object', () => {
    const cases: [string, ChainState, ChainStep][] = [
      ['the pod first', base, { kind: 'fetch', slot: 'pod', type: POD, namespace: NS, name: 'sb-1' }],
      [
        'the sandbox named by the pod controller',
        { ...base, pod },
        { kind: 'fetch', slot: 'sandbox', type: SANDBOX, namespace: NS, name: 'sb-1' },
      ],
      [
        'the claim named by the sandbox controller',
        { ...base, pod, sandbox },
        { kind: 'fetch', slot: 'claim', type: SANDBOX_CLAIM, namespace: NS, name: 'run-1' },
      ],
    ];
    for (const [name, state, want] of cases) it(name, () => assert.deepEqual(evaluateOwnerChain(state), want));
  });

  it('ends at the claim when every hop matches group, kind and uid', () => {
    assert.deepEqual(evaluateOwnerChain(full), { kind: 'claimed', claimName: 'run-1', claimUid: 'claim-uid' });
  });

  it('ignores the version of a reference (v1alpha1 owner of a v1beta1 object)', () => {
    const oldRef = ref('agents.x-k8s.io/v1alpha1', 'Sandbox', 'sb-1', 'sandbox-uid');
    const step = evaluateOwnerChain({ ...full, pod: obj('v1', 'Pod', 'sb-1', 'pod-uid', [oldRef]) });
    assert.equal(step.kind, 'claimed');
  });

  it('follows the controller reference, not the first one', () => {
    const other = ref('v1', 'ConfigMap', 'cm', 'cm-uid', false);
    const step = evaluateOwnerChain({ ...full, pod: obj('v1', 'Pod', 'sb-1', 'pod-uid', [other, sandboxRef]) });
    assert.equal(step.kind, 'claimed');
  });

  it("refuses a sandbox still in a warm pool with warm_pool 'still in warm pool'", () => {
    const warm = obj('agents.x-k8s.io/v1beta1', 'Sandbox', 'sb-1', 'sandbox-uid', [poolRef]);
    assert.deepEqual(evaluateOwnerChain({ ...base, pod, sandbox: warm }), {
      kind: 'refused',
      code: 'warm_pool',
      reason: 'still in warm pool',
    });
  });

  describe('refuses with unauthenticated', () => {
    const cases: [string, ChainState, RegExp][] = [
      ['a missing pod', { ...base, pod: null }, /pod agents\/sb-1 not found/],
      [
        'a pod whose uid is not the token pod-uid',
        { ...full, pod: obj('v1', 'Pod', 'sb-1', 'other-uid', [sandboxRef]) },
        /uid does not match the token/,
      ],
      ['a pod with no owner', { ...full, pod: obj('v1', 'Pod', 'sb-1', 'pod-uid') }, /no controller owner/],
      [
        'a pod whose only owner is not the controller',
        {
          ...full,
          pod: obj('v1', 'Pod', 'sb-1', 'pod-uid', [
            ref('agents.x-k8s.io/v1beta1', 'Sandbox', 'sb-1', 'sandbox-uid', false),
          ]),
        },
        /no controller owner/,
      ],
      [
        'a pod controlled by a ReplicaSet',
        { ...full, pod: obj('v1', 'Pod', 'sb-1', 'pod-uid', [ref('apps/v1', 'ReplicaSet', 'rs', 'rs-uid')]) },
        /controlled by a ReplicaSet, not a Sandbox/,
      ],
      [
        'a Sandbox kind from another group',
        {
          ...full,
          pod: obj('v1', 'Pod', 'sb-1', 'pod-uid', [ref('evil.example.com/v1', 'Sandbox', 'sb-1', 'sandbox-uid')]),
        },
        /not a Sandbox/,
      ],
      ['a missing sandbox', { ...base, pod, sandbox: null }, /sandbox agents\/sb-1 not found/],
      [
        'a sandbox recreated under the same name (uid mismatch)',
        { ...full, sandbox: obj('agents.x-k8s.io/v1beta1', 'Sandbox', 'sb-1', 'new-uid', [claimRef]) },
        /sandbox agents\/sb-1 uid does not match/,
      ],
      [
        'a sandbox being deleted',
        { ...full, sandbox: obj('agents.x-k8s.io/v1beta1', 'Sandbox', 'sb-1', 'sandbox-uid', [claimRef], true) },
        /sandbox agents\/sb-1 is being deleted/,
      ],
      [
        'a sandbox with no controller',
        { ...full, sandbox: obj('agents.x-k8s.io/v1beta1', 'Sandbox', 'sb-1', 'sandbox-uid') },
        /sandbox agents\/sb-1 has no controller owner/,
      ],
      [
        'a sandbox controlled by something else',
        {
          ...full,
          sandbox: obj('agents.x-k8s.io/v1beta1', 'Sandbox', 'sb-1', 'sandbox-uid', [
            ref('apps/v1', 'Deployment', 'd', 'd-uid'),
          ]),
        },
        /controlled by a Deployment, not a SandboxClaim/,
      ],
      [
        'a SandboxClaim kind in the core group',
        {
          ...full,
          sandbox: obj('agents.x-k8s.io/v1beta1', 'Sandbox', 'sb-1', 'sandbox-uid', [
            ref('v1', 'SandboxClaim', 'run-1', 'claim-uid'),
          ]),
        },
        /not a SandboxClaim/,
      ],
      ['a missing claim', { ...full, claim: null }, /sandboxclaim agents\/run-1 not found/],
      [
        'a claim name reused by a new claim (uid mismatch)',
        { ...full, claim: obj('extensions.agents.x-k8s.io/v1beta1', 'SandboxClaim', 'run-1', 'new-claim-uid') },
        /sandboxclaim agents\/run-1 uid does not match the owner reference/,
      ],
      [
        'a claim being deleted',
        {
          ...full,
          claim: obj('extensions.agents.x-k8s.io/v1beta1', 'SandboxClaim', 'run-1', 'claim-uid', undefined, true),
        },
        /sandboxclaim agents\/run-1 is being deleted/,
      ],
    ];
    for (const [name, state, pattern] of cases) {
      it(`refuses ${name}`, () => refusedWith(evaluateOwnerChain(state), 'unauthenticated', pattern));
    }
  });
});
