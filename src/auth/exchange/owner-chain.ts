/**
 * @module
 * The owner chain Pod -> Sandbox -> SandboxClaim as a pure function over the objects fetched so far:
 * it says what to fetch next, or that the chain ends at a claim, or why it is refused (uid mismatch at
 * any hop, wrong or missing controller, still in a warm pool, claim being deleted). No I/O here;
 * `kubernetes-exchanger.ts` does the fetching and calls this until it stops asking.
 */
import { isKind, POD, type ResourceType, SANDBOX, SANDBOX_CLAIM, SANDBOX_WARM_POOL } from '../../kube/agent-sandbox.ts';
import type { KubeObject, OwnerReference } from '../../kube/types.ts';

/** What is known so far. For objects: `undefined` = not fetched yet, `null` = fetched and not found. */
export interface ChainState {
  namespace: string;
  /** Pod name and uid from the TokenReview. */
  podName: string;
  podUid: string;
  pod?: KubeObject | null;
  sandbox?: KubeObject | null;
  claim?: KubeObject | null;
}

/** Which object of the chain a fetch fills in. */
export type ChainSlot = 'pod' | 'sandbox' | 'claim';

/** The next thing to do, or the verdict. */
export type ChainStep =
  | { kind: 'fetch'; slot: ChainSlot; type: ResourceType; namespace: string; name: string }
  | { kind: 'claimed'; claimName: string; claimUid: string }
  | { kind: 'refused'; code: 'unauthenticated' | 'warm_pool'; reason: string };

/** The message of a `warm_pool` refusal, exactly as DESIGN.md says. */
export const WARM_POOL_MESSAGE = 'still in warm pool';

/**
 * Evaluate the chain over what has been fetched. Call again after each fetch; it never asks twice.
 * @example
 * evaluateOwnerChain({ namespace: 'agents', podName: 'p', podUid: 'u' })
 * // { kind: 'fetch', slot: 'pod', type: POD, namespace: 'agents', name: 'p' }
 */
export function evaluateOwnerChain(state: ChainState): ChainStep {
  const { namespace } = state;
  if (state.pod === undefined) return fetchStep('pod', POD, namespace, state.podName);
  if (state.pod === null) return refuse(`pod ${namespace}/${state.podName} not found`);
  if (state.pod.metadata.uid !== state.podUid) {
    return refuse(`pod ${namespace}/${state.podName} uid does not match the token's pod-uid`);
  }

  const podOwner = controllerOf(state.pod);
  if (!podOwner) return refuse(`pod ${namespace}/${state.podName} has no controller owner`);
  if (!isKind(podOwner.apiVersion, podOwner.kind, SANDBOX)) {
    return refuse(`pod ${namespace}/${state.podName} is controlled by a ${podOwner.kind}, not a Sandbox`);
  }
  if (state.sandbox === undefined) return fetchStep('sandbox', SANDBOX, namespace, podOwner.name);
  const sandboxStep = checkFetched(state.sandbox, podOwner, namespace, 'Sandbox');
  if (sandboxStep) return sandboxStep;
  const sandbox = state.sandbox as KubeObject;
  if (sandbox.metadata.deletionTimestamp) return refuse(`sandbox ${namespace}/${podOwner.name} is being deleted`);

  const sandboxOwner = controllerOf(sandbox);
  if (!sandboxOwner) return refuse(`sandbox ${namespace}/${podOwner.name} has no controller owner`);
  if (isKind(sandboxOwner.apiVersion, sandboxOwner.kind, SANDBOX_WARM_POOL)) {
    return { kind: 'refused', code: 'warm_pool', reason: WARM_POOL_MESSAGE };
  }
  if (!isKind(sandboxOwner.apiVersion, sandboxOwner.kind, SANDBOX_CLAIM)) {
    return refuse(`sandbox ${namespace}/${podOwner.name} is controlled by a ${sandboxOwner.kind}, not a SandboxClaim`);
  }
  if (state.claim === undefined) return fetchStep('claim', SANDBOX_CLAIM, namespace, sandboxOwner.name);
  const claimStep = checkFetched(state.claim, sandboxOwner, namespace, 'SandboxClaim');
  if (claimStep) return claimStep;
  const claim = state.claim as KubeObject;
  if (claim.metadata.deletionTimestamp)
    return refuse(`sandboxclaim ${namespace}/${sandboxOwner.name} is being deleted`);
  return { kind: 'claimed', claimName: claim.metadata.name, claimUid: claim.metadata.uid };
}

/** The controller owner reference (`controller: true`) of an object, if any. */
export function controllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((ref) => ref.controller === true);
}

/** A refusal when a fetched owner is missing or is not the object the reference meant (uid). */
function checkFetched(obj: KubeObject | null, ref: OwnerReference, namespace: string, kind: string): ChainStep | null {
  const label = `${kind.toLowerCase()} ${namespace}/${ref.name}`;
  if (obj === null) return refuse(`${label} not found`);
  if (obj.metadata.uid !== ref.uid) {
    return refuse(`${label} uid does not match the owner reference (it was deleted and created again)`);
  }
  return null;
}

function fetchStep(slot: ChainSlot, type: ResourceType, namespace: string, name: string): ChainStep {
  return { kind: 'fetch', slot, type, namespace, name };
}

function refuse(reason: string): ChainStep {
  return { kind: 'refused', code: 'unauthenticated', reason };
}
