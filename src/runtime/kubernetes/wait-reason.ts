/**
 * @module
 * Says what a waiting instance waits for the cluster to do, from its claim and Sandbox as observed: a claim
 * not bound to a sandbox, a Sandbox not Ready, a change of `operatingMode` the controller has not observed, a
 * Sandbox not Suspended; each with the check an operator makes first. Pure; used by `kubernetes-runtime.ts`
 * for the admin API and the gateway's log line when a request's cluster deadline passes.
 */
import type { KubeCondition, KubeResource } from '../../kube/types.ts';
import type { ClusterWait } from '../runtime.ts';
import { observe } from './observed.ts';

/** What an instance waits for: Ready (start, resume) or Suspended (pause). */
export type WaitGoal = 'ready' | 'suspended';

const CONTROLLER = 'is the agent-sandbox controller running?';

/**
 * The wait of claim `claimName` for `goal`, as its objects say now.
 * @param claim the claim as last seen (undefined: not seen by the watch yet)
 * @param sandbox its Sandbox as last seen
 */
export function describeWait(
  goal: WaitGoal,
  claimName: string,
  claim: KubeResource | undefined,
  sandbox: KubeResource | undefined,
  since: number,
): ClusterWait {
  if (!claim) {
    return { what: `claim ${claimName} not seen by the watch`, hint: 'is the API server reachable?', since };
  }
  const o = observe(claim, sandbox);
  if (o.phase === 'unbound') {
    return { what: `claim ${claimName} not bound`, ...said(claim, 'Ready'), hint: CONTROLLER, since };
  }
  if (o.phase === 'starting' && o.reason === 'sandbox not seen yet') {
    return { what: `sandbox ${o.sandbox} of claim ${claimName} not seen by the watch`, hint: CONTROLLER, since };
  }
  const lag = lagging(sandbox);
  if (lag !== undefined) {
    return {
      what: `sandbox ${sandbox!.metadata.name} change to operatingMode ${lag} not observed`,
      hint: CONTROLLER,
      since,
    };
  }
  const name = sandbox!.metadata.name;
  if (goal === 'suspended')
    return { what: `sandbox ${name} not Suspended`, ...said(sandbox!, 'Suspended'), hint: CONTROLLER, since };
  return {
    what: `sandbox ${name} not Ready`,
    ...said(sandbox!, 'Ready'),
    hint: 'is its pod scheduled, its image pulled and its readiness probe passing? (kubectl describe pod)',
    since,
  };
}

/** The mode asked for when no condition of the Sandbox has caught up with its `generation`, else undefined. */
function lagging(sandbox: KubeResource | undefined): string | undefined {
  const gen = sandbox?.metadata.generation;
  const list = (sandbox?.status as { conditions?: KubeCondition[] } | undefined)?.conditions ?? [];
  if (gen === undefined || list.length === 0) return undefined;
  if (list.some((c) => c.observedGeneration === undefined || c.observedGeneration >= gen)) return undefined;
  return (sandbox?.spec as { operatingMode?: string } | undefined)?.operatingMode ?? 'Running';
}

/** `reason: message` of a condition, when the cluster wrote one. */
function said(obj: KubeResource, type: string): { reason?: string } {
  const c = ((obj.status as { conditions?: KubeCondition[] } | undefined)?.conditions ?? []).find(
    (x) => x.type === type,
  );
  if (!c?.reason) return {};
  return { reason: c.message ? `${c.reason}: ${c.message}` : c.reason };
}
