/**
 * @module
 * A small simulation of the agent-sandbox controllers (and the garbage collector) over the double's store,
 * level-based like the real ones: a SandboxWarmPool keeps `replicas` Sandboxes made from its template; a
 * SandboxClaim adopts a Ready pool Sandbox (controller reference moves to the claim) or gets a new one;
 * a Sandbox in `Running` has a Pod (a local process, `kubelet.ts`), in `Suspended` none; conditions
 * `Ready`/`Suspended` carry `observedGeneration`; a pod that ended (Failed/Succeeded) makes the Sandbox
 * `Finished` and not Ready (reason PodFailed/PodSucceeded); dependents of a deleted owner are deleted. `halt()` stops
 * reconciling (the controller down, the API server and pods going on) until `proceed()`.
 */
import {
  apiVersionOf,
  POD,
  type ResourceType,
  SANDBOX,
  SANDBOX_CLAIM,
  SANDBOX_TEMPLATE,
  SANDBOX_WARM_POOL,
} from '../../src/kube/agent-sandbox.ts';
import { FakeKubelet } from './kubelet.ts';
import type { ObjectStore } from './object-store.ts';
import { controllerRef, generateName, newMeta, type WireObject } from './objects.ts';

const ALL_TYPES: ResourceType[] = [POD, SANDBOX, SANDBOX_CLAIM, SANDBOX_WARM_POOL, SANDBOX_TEMPLATE];
const SANDBOX_NAME_ANN = 'agents.x-k8s.io/sandbox-name';
const POD_NAME_ANN = 'agents.x-k8s.io/pod-name';

interface Condition {
  type: string;
  status: 'True' | 'False';
  reason: string;
  message?: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
}

/** The controllers; `start()` after the store exists, `stop()` kills every pod process. */
export class SandboxController {
  readonly kubelet: FakeKubelet;
  readonly #store: ObjectStore;
  #unsubscribe: (() => void) | undefined;
  #scheduled = false;
  #stopped = false;
  #halted = false;
  /** Reconcile passes run so far. */
  passes = 0;

  /** @param podStartDelayMs how long each pod takes to start (scheduling, image pull, runtime) @default 0 */
  constructor(store: ObjectStore, podStartDelayMs = 0) {
    this.#store = store;
    this.kubelet = new FakeKubelet(podStartDelayMs);
  }

  start(): void {
    this.#unsubscribe = this.#store.subscribe(() => this.#schedule());
    this.#schedule();
  }

  /**
   * Stops reconciling, as when the agent-sandbox controller is down: the API server answers and running pods
   * go on, but nothing binds, starts, suspends or resumes. `proceed()` takes up again.
   */
  halt(): void {
    this.#halted = true;
  }

  /** Reconciles again after `halt()`: one pass now over everything that changed meanwhile. */
  proceed(): void {
    this.#halted = false;
    this.#schedule();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe?.();
    await this.kubelet.stopAll();
  }

  #schedule(): void {
    if (this.#scheduled || this.#stopped || this.#halted) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      if (this.#stopped || this.#halted) return;
      this.passes++;
      this.#collectGarbage();
      for (const pool of this.#store.list(SANDBOX_WARM_POOL)) this.#reconcilePool(pool);
      for (const claim of this.#store.list(SANDBOX_CLAIM)) this.#reconcileClaim(claim);
      for (const sandbox of this.#store.list(SANDBOX)) this.#reconcileSandbox(sandbox);
    });
  }

  /** Deletes objects whose controller is gone, and stops processes whose Pod object is gone. */
  #collectGarbage(): void {
    const uids = new Set<string>();
    const all = ALL_TYPES.flatMap((t) => this.#store.list(t).map((o) => [t, o] as const));
    for (const [, o] of all) uids.add(o.metadata.uid);
    for (const [t, o] of all) {
      const owner = o.metadata.ownerReferences?.find((r) => r.controller);
      if (owner && !uids.has(owner.uid)) this.#store.delete(t, o.metadata.namespace, o.metadata.name);
    }
    const pods = new Set(this.#store.list(POD).map((p) => p.metadata.uid));
    for (const uid of this.kubelet.uids()) if (!pods.has(uid)) void this.kubelet.stop(uid, () => this.#schedule());
  }

  #reconcilePool(pool: WireObject): void {
    const ns = pool.metadata.namespace;
    const spec = (pool.spec ?? {}) as { replicas?: number; sandboxTemplateRef?: { name?: string } };
    const template = this.#store.get(SANDBOX_TEMPLATE, ns, spec.sandboxTemplateRef?.name ?? '');
    const owned = this.#owned(SANDBOX, pool);
    const replicas = spec.replicas ?? 0;
    if (template) {
      for (let n = owned.length; n < replicas; n++)
        owned.push(this.#newSandbox(ns, freeName(this.#store, ns, `${pool.metadata.name}-`), pool, template));
    }
    // Extra sandboxes go, those not ready first.
    const extra = owned
      .sort((a, b) => Number(isReady(a)) - Number(isReady(b)))
      .slice(0, Math.max(0, owned.length - replicas));
    for (const s of extra) this.#store.delete(SANDBOX, ns, s.metadata.name);
    const kept = owned.filter((s) => !extra.includes(s));
    this.#setStatus(SANDBOX_WARM_POOL, pool, {
      replicas: kept.length,
      readyReplicas: kept.filter(isReady).length,
      selector: `agents.x-k8s.io/pool=${pool.metadata.name}`,
    });
  }

  #reconcileClaim(claim: WireObject): void {
    const ns = claim.metadata.namespace;
    let sandbox = this.#owned(SANDBOX, claim)[0];
    if (!sandbox) {
      const poolName = (claim.spec as { warmPoolRef?: { name?: string } } | undefined)?.warmPoolRef?.name ?? '';
      const pool = this.#store.get(SANDBOX_WARM_POOL, ns, poolName);
      if (!pool) {
        this.#setStatus(SANDBOX_CLAIM, claim, {
          conditions: conditions(claim, [['Ready', false, 'WarmPoolNotFound', `warm pool "${poolName}" not found`]]),
        });
        return;
      }
      const warm = this.#owned(SANDBOX, pool).find(isReady);
      if (warm) sandbox = this.#adopt(warm, claim);
      else {
        const templateName = (pool.spec as { sandboxTemplateRef?: { name?: string } }).sandboxTemplateRef?.name ?? '';
        const template = this.#store.get(SANDBOX_TEMPLATE, ns, templateName);
        if (!template) {
          this.#setStatus(SANDBOX_CLAIM, claim, {
            conditions: conditions(claim, [
              ['Ready', false, 'TemplateNotFound', `template "${templateName}" not found`],
            ]),
          });
          return;
        }
        const name = this.#store.get(SANDBOX, ns, claim.metadata.name)
          ? freeName(this.#store, ns, `${claim.metadata.name}-`)
          : claim.metadata.name;
        sandbox = this.#newSandbox(ns, name, claim, template);
      }
    }
    if (claim.metadata.annotations?.[SANDBOX_NAME_ANN] !== sandbox.metadata.name) {
      claim.metadata.annotations = { ...claim.metadata.annotations, [SANDBOX_NAME_ANN]: sandbox.metadata.name };
      claim = this.#store.update(SANDBOX_CLAIM, claim) ?? claim;
    }
    const ready = readyCondition(sandbox);
    const podIPs = (sandbox.status as { podIPs?: string[] } | undefined)?.podIPs;
    this.#setStatus(SANDBOX_CLAIM, claim, {
      conditions: conditions(claim, [
        ['Ready', ready?.status === 'True', ready?.reason ?? 'SandboxNotReady', ready?.message],
      ]),
      sandbox: { name: sandbox.metadata.name, ...(podIPs ? { podIPs } : {}) },
    });
  }

  #reconcileSandbox(sandbox: WireObject): void {
    const ns = sandbox.metadata.namespace;
    const spec = (sandbox.spec ?? {}) as {
      operatingMode?: string;
      podTemplate?: { metadata?: { labels?: Record<string, string> }; spec?: unknown };
    };
    const podName = sandbox.metadata.annotations?.[POD_NAME_ANN] ?? sandbox.metadata.name;
    let pod = this.#store.get(POD, ns, podName);
    const fqdn = `${sandbox.metadata.name}.${ns}.svc.cluster.local`;
    if (spec.operatingMode === 'Suspended') {
      if (pod) this.#store.delete(POD, ns, podName);
      // Suspended is observed once the pod's process is gone, not when its deletion was asked.
      const gone = !pod && !this.kubelet.hasProcess(ns, podName);
      this.#setStatus(SANDBOX, sandbox, {
        conditions: conditions(sandbox, [
          ['Ready', false, 'SandboxSuspended', 'the sandbox is suspended'],
          gone
            ? ['Suspended', true, 'SandboxSuspended', 'the pod was deleted; volumes are kept']
            : ['Suspended', false, 'PodTerminating', 'the pod is being deleted'],
        ]),
        serviceFQDN: fqdn,
      });
      return;
    }
    if (!pod) {
      const meta = newMeta(ns, podName, sandbox);
      meta.labels = {
        ...spec.podTemplate?.metadata?.labels,
        'agents.x-k8s.io/sandbox-name-hash': sandbox.metadata.uid.slice(0, 8),
      };
      pod =
        this.#store.create(POD, {
          apiVersion: apiVersionOf(POD),
          kind: POD.kind,
          metadata: meta,
          spec: structuredClone((spec.podTemplate?.spec ?? {}) as Record<string, unknown>),
          status: { phase: 'Pending' },
        }) ?? undefined;
      if (!pod) return;
    }
    const ip = this.kubelet.run(pod, () => this.#schedule());
    const podStatus = this.kubelet.podStatus(pod.metadata.uid);
    if (podStatus && JSON.stringify(pod.status) !== JSON.stringify(podStatus))
      this.#store.update(POD, { ...pod, status: { ...podStatus } });
    // As agent-sandbox's computeReadyCondition / computeFinishedCondition: a pod that ended (Failed or
    // Succeeded: its containers are not restarted) makes the Sandbox Finished and not Ready for that reason;
    // a container that crashes and is restarted only makes the pod, so the Sandbox, not Ready.
    const phase = podStatus?.phase ?? 'Pending';
    const ready = podStatus?.conditions.some((c) => c.type === 'Ready' && c.status === 'True') === true;
    const ended = phase === 'Failed' || phase === 'Succeeded';
    const endReason = phase === 'Failed' ? 'PodFailed' : 'PodSucceeded';
    const endMessage = phase === 'Failed' ? 'Pod failed' : 'Pod completed successfully';
    const readyCondition: [string, boolean, string, string | undefined] = ended
      ? ['Ready', false, endReason, endMessage]
      : ready
        ? ['Ready', true, 'DependenciesReady', 'Pod is Ready']
        : [
            'Ready',
            false,
            'DependenciesNotReady',
            phase === 'Running' ? 'Pod is Running but not Ready' : `Pod exists with phase: ${phase}`,
          ];
    this.#setStatus(SANDBOX, sandbox, {
      conditions: conditions(sandbox, [
        readyCondition,
        ['Suspended', false, 'SandboxRunning', 'the sandbox is running'],
        ...(ended ? [['Finished', true, endReason, endMessage] as [string, boolean, string, string]] : []),
      ]),
      serviceFQDN: fqdn,
      ...(ready && !ended ? { podIPs: [ip] } : {}),
    });
  }

  /** A claim takes a pool sandbox: the controller reference moves to the claim. */
  #adopt(sandbox: WireObject, claim: WireObject): WireObject {
    sandbox.metadata.ownerReferences = [controllerRef(claim)];
    sandbox.metadata.labels = { ...sandbox.metadata.labels, 'agents.x-k8s.io/claim-uid': claim.metadata.uid };
    return this.#store.update(SANDBOX, sandbox) ?? sandbox;
  }

  #newSandbox(ns: string, name: string, owner: WireObject, template: WireObject): WireObject {
    const t = (template.spec ?? {}) as { podTemplate?: unknown; volumeClaimTemplates?: unknown };
    const meta = newMeta(ns, name, owner);
    meta.labels = { 'agents.x-k8s.io/sandbox-template-ref': template.metadata.name };
    if (owner.kind === SANDBOX_WARM_POOL.kind) meta.labels['agents.x-k8s.io/pool'] = owner.metadata.name;
    const sandbox: WireObject = {
      apiVersion: apiVersionOf(SANDBOX),
      kind: SANDBOX.kind,
      metadata: meta,
      spec: { podTemplate: structuredClone(t.podTemplate ?? {}), operatingMode: 'Running' },
      status: {},
    };
    return this.#store.create(SANDBOX, sandbox) ?? sandbox;
  }

  #owned(type: ResourceType, owner: WireObject): WireObject[] {
    return this.#store
      .list(type, { namespace: owner.metadata.namespace })
      .filter((o) => o.metadata.ownerReferences?.some((r) => r.controller && r.uid === owner.metadata.uid));
  }

  /** Writes `status` when it differs (the store skips no-op writes, so passes converge). */
  #setStatus(type: ResourceType, obj: WireObject, status: Record<string, unknown>): void {
    const current = this.#store.get(type, obj.metadata.namespace, obj.metadata.name);
    if (!current || current.metadata.uid !== obj.metadata.uid) return;
    if (JSON.stringify(current.status ?? {}) === JSON.stringify(status)) return;
    this.#store.update(type, { ...current, status });
  }
}

function readyCondition(o: WireObject): Condition | undefined {
  return ((o.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).find((c) => c.type === 'Ready');
}

function isReady(o: WireObject): boolean {
  return readyCondition(o)?.status === 'True';
}

/** Conditions for `o`; a condition whose status did not change keeps its lastTransitionTime. */
function conditions(o: WireObject, wanted: [string, boolean, string, string | undefined][]): Condition[] {
  const old = (o.status as { conditions?: Condition[] } | undefined)?.conditions ?? [];
  return wanted.map(([type, on, reason, message]) => {
    const status = on ? 'True' : 'False';
    const prev = old.find((c) => c.type === type);
    const lastTransitionTime =
      prev && prev.status === status && prev.lastTransitionTime
        ? prev.lastTransitionTime
        : new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    return {
      type,
      status,
      reason,
      ...(message ? { message } : {}),
      observedGeneration: o.metadata.generation ?? 1,
      lastTransitionTime,
    };
  });
}

function freeName(store: ObjectStore, ns: string, prefix: string): string {
  for (;;) {
    const name = generateName(prefix);
    if (!store.get(SANDBOX, ns, name) && !store.get(POD, ns, name)) return name;
  }
}
