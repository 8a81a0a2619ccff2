/**
 * @module
 * What a claim and its Sandbox say about an instance, as a pure function of the objects (observed state,
 * never what was asked): not bound yet, starting, ready at pod IP, suspending or suspended (a pod whose app
 * crashed stays `starting` here; `app-exit.ts` reads the pod to tell a crash from a slow start). A
 * condition counts only when its `observedGeneration` has caught up with the Sandbox's `generation`, so a
 * patch just sent is never mistaken for done. Used by `kubernetes-runtime.ts` to wait by watch and to adopt.
 */
import type { KubeCondition, KubeResource } from '../../kube/types.ts';
import type { InstanceIdentity, ObservedInstance } from '../runtime.ts';
import { LABELS } from './objects.ts';

/** The annotation agent-sandbox puts on a claim naming its Sandbox. */
export const SANDBOX_NAME_ANNOTATION = 'agents.x-k8s.io/sandbox-name';

/** The observed phase of one instance. */
export type Observed =
  | { phase: 'unbound'; reason: string }
  | { phase: 'starting'; sandbox: string; reason: string }
  | { phase: 'ready'; sandbox: string; podIp: string }
  | { phase: 'suspending'; sandbox: string }
  | { phase: 'suspended'; sandbox: string };

/** The Sandbox a claim is bound to, from its status or annotation. */
export function sandboxNameOf(claim: KubeResource): string | undefined {
  const status = claim.status as { sandbox?: { name?: unknown } } | undefined;
  const name = status?.sandbox?.name ?? claim.metadata.annotations?.[SANDBOX_NAME_ANNOTATION];
  return typeof name === 'string' && name ? name : undefined;
}

/** A current condition of `type` (observedGeneration caught up), or undefined. */
export function currentCondition(obj: KubeResource, type: string): KubeCondition | undefined {
  const list = (obj.status as { conditions?: KubeCondition[] } | undefined)?.conditions ?? [];
  const c = list.find((x) => x.type === type);
  if (!c) return undefined;
  const gen = obj.metadata.generation;
  if (gen !== undefined && c.observedGeneration !== undefined && c.observedGeneration < gen) return undefined;
  return c;
}

/**
 * The phase of an instance from its claim and Sandbox (undefined when not fetched or gone).
 * @param sandbox the Sandbox named by the claim, if known
 */
export function observe(claim: KubeResource, sandbox: KubeResource | undefined): Observed {
  const name = sandboxNameOf(claim);
  if (!name) {
    const ready = currentCondition(claim, 'Ready');
    return { phase: 'unbound', reason: ready?.reason ?? 'no sandbox yet' };
  }
  if (!sandbox || sandbox.metadata.name !== name)
    return { phase: 'starting', sandbox: name, reason: 'sandbox not seen yet' };
  const mode = (sandbox.spec as { operatingMode?: string } | undefined)?.operatingMode ?? 'Running';
  if (mode === 'Suspended') {
    return currentCondition(sandbox, 'Suspended')?.status === 'True'
      ? { phase: 'suspended', sandbox: name }
      : { phase: 'suspending', sandbox: name };
  }
  const ready = currentCondition(sandbox, 'Ready');
  const ips = (sandbox.status as { podIPs?: unknown } | undefined)?.podIPs;
  const podIp = Array.isArray(ips) && typeof ips[0] === 'string' ? ips[0] : undefined;
  if (ready?.status === 'True' && podIp) return { phase: 'ready', sandbox: name, podIp };
  return { phase: 'starting', sandbox: name, reason: ready?.reason ?? 'not ready' };
}

/**
 * A claim of service `service` as the runtime lists it: running (at its pod IP) or paused (Suspended, no pod:
 * its address comes with the resume); undefined while not bound or still starting.
 */
export function observedInstance(
  claim: KubeResource,
  sandbox: KubeResource | undefined,
  service: string,
  port: number,
): ObservedInstance | undefined {
  const o = observe(claim, sandbox);
  if (o.phase === 'unbound' || o.phase === 'starting') return undefined;
  return {
    name: claim.metadata.labels?.[LABELS.instance] ?? claim.metadata.name,
    service,
    pid: null,
    incarnation: claim.metadata.uid,
    host: o.phase === 'ready' ? o.podIp : '',
    port,
    state: o.phase === 'ready' ? 'running' : 'paused',
  };
}

/**
 * The claim that is still the recorded instance's, among `claims` of ours: labelled (or named) with its
 * instance name and its service, not being deleted, and the recorded one (same uid) when the record says.
 */
export function claimOfRecord(claims: readonly KubeResource[], record: InstanceIdentity): KubeResource | undefined {
  const claim = claims.find((c) => (c.metadata.labels?.[LABELS.instance] ?? c.metadata.name) === record.name);
  if (!claim || claim.metadata.deletionTimestamp) return undefined;
  if (claim.metadata.labels?.[LABELS.service] !== record.service) return undefined;
  if (record.incarnation !== null && claim.metadata.uid !== record.incarnation) return undefined;
  return claim;
}
