/**
 * @module
 * Watches the pods of the runtime's sandboxes to notice an app that ends by itself (the rules are the pure
 * `app-exit.ts`): an instance's app seen ready (`markReady`) that later terminates, crash-loops or restarts is
 * reported once through `ended`; `endedBeforeReady` lets a start fail at once. It deletes nothing itself.
 * Used by `kubernetes-runtime.ts`, which owns the instances and ends them.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../../common/log.ts';
import { POD } from '../../kube/agent-sandbox.ts';
import { type Informer, startInformer } from '../../kube/informer.ts';
import type { ObjectClient } from '../../kube/object-client.ts';
import type { KubeResource } from '../../kube/types.ts';
import { type AppEnd, appEnded, ownPod, podNameOf, type ReadyMark, readyMark } from './app-exit.ts';
import { LABELS } from './objects.ts';

/** What the watch reads and writes on an instance of the runtime. */
export interface WatchedInstance {
  name: string;
  claim: string;
  requested: boolean;
  /** How its app ended by itself, once seen. */
  end?: AppEnd;
  /** Its app as last seen ready (start, resume, adopt); cleared while a pause runs. Undefined: not watched. */
  ready?: ReadyMark;
}

/** Options of `ExitWatch`. */
export interface ExitWatchOptions<I extends WatchedInstance> {
  kubeconfig: KubeConfig;
  client: ObjectClient;
  namespace: string;
  log: Logger;
  /** The runtime's instances now. */
  instances: () => Iterable<I>;
  /** The instance's claim as observed now, when it is still its own (same uid). */
  claimOf: (inst: I) => KubeResource | undefined;
  /** The Sandbox the claim is bound to, as observed now. */
  sandboxOf: (claim: KubeResource) => KubeResource | undefined;
  /** A pod changed (the runtime re-checks its waits, then calls `check`). */
  changed: () => void;
  /** The instance's app ended by itself (`inst.end` set): the runtime ends the instance. */
  ended: (inst: I) => void;
  onError: (err: unknown) => void;
}

/** The pod watch of the Kubernetes runtime. */
export class ExitWatch<I extends WatchedInstance> {
  readonly #o: ExitWatchOptions<I>;
  readonly #pods: Informer;

  constructor(options: ExitWatchOptions<I>) {
    this.#o = options;
    this.#pods = startInformer({
      kubeconfig: options.kubeconfig,
      client: options.client,
      namespace: options.namespace,
      type: POD,
      labelSelector: LABELS.service, // the pods of every service's template (objects.ts)
      onUpsert: () => options.changed(),
      onDelete: () => options.changed(),
      onError: options.onError,
    });
  }

  /** A watched object changed: a ready app that ended ends its instance. */
  check(): void {
    for (const inst of [...this.#o.instances()]) {
      if (!inst.ready || inst.requested || inst.end) continue;
      const sandbox = this.#sandboxOf(inst);
      const mode = (sandbox?.spec as { operatingMode?: string } | undefined)?.operatingMode;
      if (!sandbox || mode === 'Suspended') continue;
      const pod = this.#podOf(sandbox);
      // Ready was seen before its pod was: the pod as first seen is the mark.
      if (inst.ready.podUid === '' && pod) inst.ready = readyMark(pod);
      const end = appEnded(sandbox, pod, inst.ready);
      if (end) this.#appEnded(inst, end);
    }
  }

  /** How the sandbox's app ended while it was starting, if it did (a start then fails at once). */
  endedBeforeReady(sandbox: KubeResource): AppEnd | undefined {
    return appEnded(sandbox, this.#podOf(sandbox));
  }

  /** Remembers the app's pod as it is now that it was seen ready, to notice a later restart. */
  markReady(inst: I): void {
    const sandbox = this.#sandboxOf(inst);
    inst.ready = (sandbox && readyMark(this.#podOf(sandbox))) ?? { podUid: '', restarts: 0 };
  }

  stop(): void {
    this.#pods.stop();
  }

  /** Its app ended by itself: the instance ends (as a local process that exits). */
  #appEnded(inst: I, end: AppEnd): void {
    inst.end = end;
    this.#o.log.warn({ instance: inst.name, claim: inst.claim, reason: end.reason }, 'instance app ended');
    this.#o.ended(inst);
  }

  #sandboxOf(inst: I): KubeResource | undefined {
    const claim = this.#o.claimOf(inst);
    return claim && this.#o.sandboxOf(claim);
  }

  #podOf(sandbox: KubeResource): KubeResource | undefined {
    return ownPod(sandbox, this.#pods.get(podNameOf(sandbox)));
  }
}
