/**
 * @module
 * Whether a sandbox's app has ended, as a pure function of its Sandbox and Pod (observed state): the pod
 * ended (`status.phase` Failed or Succeeded; agent-sandbox then sets the Sandbox's `Finished` condition and
 * `Ready` False with reason PodFailed/PodSucceeded), or its container terminated (`state.terminated`), is
 * waiting to be restarted after a crash (`state.waiting.reason` CrashLoopBackOff, the crash in
 * `lastState.terminated`) or was restarted since it was last seen ready (`restartCount` grew). Used by
 * `kubernetes-runtime.ts` to fail a start at once and to report an app that exits, as the local runtime does.
 */
import type { KubeResource } from '../../kube/types.ts';
import { currentCondition } from './observed.ts';

/** The annotation agent-sandbox puts on a Sandbox whose pod has another name (an older warm-pool adoption). */
export const POD_NAME_ANNOTATION = 'agents.x-k8s.io/pod-name';

/** How the app ended, as the cluster shows it. */
export interface AppEnd {
  /** The container's exit code, when the cluster shows one. */
  code: number | null;
  /** What the cluster says, e.g. `container app terminated (Error, exit code 3)`. */
  reason: string;
}

/** What a running app was seen as when it was last ready: its pod and how often its container had restarted. */
export interface ReadyMark {
  podUid: string;
  restarts: number;
}

interface ContainerStatus {
  name?: string;
  restartCount?: number;
  state?: { terminated?: Terminated; waiting?: { reason?: string; message?: string } };
  lastState?: { terminated?: Terminated };
}

interface Terminated {
  exitCode?: number;
  reason?: string;
}

/** The name of the Sandbox's pod. */
export function podNameOf(sandbox: KubeResource): string {
  return sandbox.metadata.annotations?.[POD_NAME_ANNOTATION] || sandbox.metadata.name;
}

/** The pod when it is the Sandbox's own (its controller reference is the Sandbox: same name is not enough). */
export function ownPod(sandbox: KubeResource, pod: KubeResource | undefined): KubeResource | undefined {
  if (!pod) return undefined;
  const owner = pod.metadata.ownerReferences?.find((r) => r.controller);
  return owner && owner.uid !== sandbox.metadata.uid ? undefined : pod;
}

/** The mark of a ready app's pod, to tell a later restart from the state it was ready in. */
export function readyMark(pod: KubeResource | undefined): ReadyMark | undefined {
  if (!pod) return undefined;
  return { podUid: pod.metadata.uid, restarts: container(pod)?.restartCount ?? 0 };
}

/**
 * How the app ended, or undefined while it has not.
 * @param mark what it was when last seen ready: a restart since counts as an end; without a mark (a start
 *   still waiting) only a container that is terminated or crash-looping now does, not one that crashed once
 *   before and runs again
 */
export function appEnded(sandbox: KubeResource, pod: KubeResource | undefined, mark?: ReadyMark): AppEnd | undefined {
  const finished = currentCondition(sandbox, 'Finished');
  const phase = (pod?.status as { phase?: string } | undefined)?.phase;
  const c = pod && container(pod);
  const name = c?.name ?? 'app';
  const said = (t: Terminated | undefined, how: string): AppEnd => ({
    code: typeof t?.exitCode === 'number' ? t.exitCode : null,
    reason: `container ${name} ${how}${t ? ` (${t.reason ?? 'terminated'}, exit code ${t.exitCode ?? '?'})` : ''}`,
  });
  if (phase === 'Failed' || phase === 'Succeeded') return said(c?.state?.terminated, `ended: pod ${phase}`);
  if (finished?.status === 'True') return said(undefined, `ended: sandbox Finished (${finished.reason})`);
  if (!c) return undefined;
  if (c.state?.terminated) return said(c.state.terminated, 'terminated');
  if (c.state?.waiting?.reason === 'CrashLoopBackOff') return said(c.lastState?.terminated, 'crash-looping');
  if (mark && pod && pod.metadata.uid === mark.podUid && (c.restartCount ?? 0) > mark.restarts) {
    return said(c.lastState?.terminated, 'restarted');
  }
  return undefined;
}

function container(pod: KubeResource): ContainerStatus | undefined {
  const list = (pod.status as { containerStatuses?: ContainerStatus[] } | undefined)?.containerStatuses;
  return Array.isArray(list) ? list[0] : undefined;
}
