/**
 * @module
 * The Kubernetes `InstanceRuntime` (kubernetes-sigs/agent-sandbox): an instance is a SandboxClaim on the
 * service's SandboxWarmPool, named with the session's claim name; start waits (by watch) until its Sandbox
 * is Ready and answers its pod IP + container port; pause = `operatingMode: Suspended`, resume = `Running`,
 * each done when the Sandbox's conditions say so; delete = delete the claim. Templates and pools follow the
 * services (`service-sync.ts`). A claim deleted by someone else ends its instance. Claims outlive the gateway:
 * `list` = the claims labelled as ours that no instance here owns, `adopt` = rebind an instance to its claim
 * (same uid); a leftover nobody adopts is found again by its session's next request (the claim is named after
 * the session) or reaped by the services' idle policy (`service-sync.ts`), so the gateway never deletes it.
 * A failed start deletes a claim it made but releases one it took over (a returning session's). The pods are
 * watched too (`exit-watch.ts`): a container that terminates or crash-loops fails a start at once, and an app
 * that ends after it was ready ends its instance (claim deleted, `onExit` not requested), as a local process
 * that exits does. `onExit.requested` is true only after `delete`; a failed start reports false. `waitingOn`
 * says what a start, pause or resume waits for the cluster to do (`sandbox-wait.ts`), for the gateway's
 * request deadline and admin API.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Clock } from '../../common/clock.ts';
import type { Logger } from '../../common/log.ts';
import { SANDBOX, SANDBOX_CLAIM } from '../../kube/agent-sandbox.ts';
import { type Informer, startInformer } from '../../kube/informer.ts';
import type { ObjectClient } from '../../kube/object-client.ts';
import type { KubeResource } from '../../kube/types.ts';
import type {
  ClusterWait,
  InstanceAddress,
  InstanceExit,
  InstanceIdentity,
  InstanceRuntime,
  InstanceSpec,
  LogLine,
  ObservedInstance,
  StartedInstance,
} from '../runtime.ts';
import type { ServiceSpec } from '../service-spec.ts';
import { createOrTakeOver } from './claim-create.ts';
import { ExitWatch, type WatchedInstance } from './exit-watch.ts';
import { claimFor, containerPort, LABELS, MANAGED_SELECTOR, type SandboxObjectOptions } from './objects.ts';
import { claimOfRecord, observe, observedInstance } from './observed.ts';
import { SandboxWaits, type WaitingInstance } from './sandbox-wait.ts';
import { ServiceSync } from './service-sync.ts';
import { Waiters } from './waiters.ts';

/** Options of `KubernetesRuntime`. */
export interface KubernetesRuntimeOptions extends SandboxObjectOptions {
  kubeconfig: KubeConfig;
  client: ObjectClient;
  services: readonly ServiceSpec[];
  log: Logger;
  clock: Clock;
  /** Longest wait for a pause or resume to be observed (ms). @default 60000 */
  operationTimeoutMs?: number;
  /** Level-based resync of templates, pools and orphan claims (ms). @default 30000 */
  resyncMs?: number;
}

interface Instance extends WatchedInstance, WaitingInstance {
  uid: string;
  cfg: ServiceSpec;
  /** Set when its start failed: its end is then not `requested`, whatever cleanup the runtime did. */
  startFailed?: boolean;
}

/** Runs instances as agent-sandbox claims. */
export class KubernetesRuntime implements InstanceRuntime {
  /** Leftover claims are the cluster's to keep or reap (see the module comment), never deleted at start. */
  readonly reapsLeftovers = true;
  readonly #o: KubernetesRuntimeOptions;
  readonly #claims: Informer;
  readonly #sandboxes: Informer;
  readonly #exits: ExitWatch<Instance>;
  readonly #waits: SandboxWaits<Instance>;
  readonly #waiters = new Waiters();
  readonly #instances = new Map<string, Instance>();
  readonly #byClaim = new Map<string, Instance>();
  readonly #listeners: ((name: string, exit: InstanceExit) => void)[] = [];
  readonly #sync: ServiceSync;
  #services: readonly ServiceSpec[];
  #closed = false;

  constructor(options: KubernetesRuntimeOptions) {
    this.#o = options;
    this.#services = options.services;
    const common = { kubeconfig: options.kubeconfig, client: options.client, namespace: options.namespace };
    const onError = (what: string) => (err: unknown) =>
      options.log.warn({ what, err: (err as Error).message }, 'Kubernetes watch failed; retrying');
    this.#claims = startInformer({
      ...common,
      type: SANDBOX_CLAIM,
      labelSelector: MANAGED_SELECTOR,
      onUpsert: (c) => this.#claimSeen(c),
      onDelete: (c) => this.#claimGone(c.metadata.name, c.metadata.uid),
      onError: onError('sandboxclaims'),
    });
    this.#sandboxes = startInformer({
      ...common,
      type: SANDBOX,
      onUpsert: () => this.#changed(),
      onDelete: () => this.#changed(),
      onError: onError('sandboxes'),
    });
    this.#exits = new ExitWatch({
      ...common,
      log: options.log,
      instances: () => this.#instances.values(),
      claimOf: (inst) => this.#claimOf(inst),
      sandboxOf: (claim) => this.#sandboxOf(claim),
      changed: () => this.#changed(),
      ended: (inst) => this.#appEnded(inst),
      onError: onError('pods'),
    });
    this.#waits = new SandboxWaits({
      ...options,
      waiters: this.#waiters,
      has: (inst) => this.#instances.has(inst.name),
      claimOf: (inst) => this.#claimOf(inst),
      sandboxOf: (claim) => this.#sandboxOf(claim),
      sandbox: (name) => this.#sandboxes.get(name),
      endedBeforeReady: (sandbox) => this.#exits.endedBeforeReady(sandbox),
    });
    this.#sync = new ServiceSync({
      ...options,
      services: () => this.#services,
      claims: () => this.#claims.list(),
      owned: (claim) => this.#byClaim.has(claim),
      sandbox: (name) => this.#sandboxes.get(name),
    });
    this.#sync.start();
  }

  /** Runs one resync pass of templates, pools and orphan claims now (after the running one); rejects when it fails. */
  resyncNow(): Promise<void> {
    return this.#sync.passNow();
  }

  /** Resolves when the first lists of claims and sandboxes are done (tests, start-up). */
  async synced(): Promise<void> {
    // Not the pods: a Role without them (a chart before pods were read) only loses crash detection, never the start.
    await Promise.all([this.#claims.synced, this.#sandboxes.synced, this.#sync.firstPass]);
  }

  /**
   * Takes a new set of services (a reload): templates and pools follow at the next pass, which runs now;
   * claims of removed services are deleted by it; live claims keep their sandboxes.
   */
  setServices(services: readonly ServiceSpec[]): void {
    this.#services = services;
    for (const inst of this.#instances.values()) {
      const cfg = services.find((s) => s.name === inst.cfg.name);
      if (cfg) inst.cfg = cfg;
    }
    this.#sync.soon();
  }

  async start(spec: InstanceSpec): Promise<StartedInstance> {
    if (this.#closed) throw new Error('runtime is closed');
    const cfg = this.#services.find((s) => s.name === spec.service);
    if (!cfg) throw new Error(`no service ${spec.service}`);
    const claimName = spec.session?.claim ?? spec.name;
    const { claim, created } = await createOrTakeOver({
      client: this.#o.client,
      namespace: this.#o.namespace,
      body: claimFor(
        cfg,
        {
          name: claimName,
          instance: spec.name,
          sessionHash: spec.session?.keyHash,
          shutdownAt: spec.session?.expiresAt ?? undefined,
        },
        this.#o,
      ),
      held: () => this.#byClaim.has(claimName),
      released: () =>
        this.#waiters.until(
          () => (this.#byClaim.has(claimName) ? undefined : true),
          this.#timeout(),
          `old claim ${claimName}`,
        ),
    });
    const inst: Instance = { name: spec.name, claim: claimName, uid: claim.metadata.uid, cfg, requested: false };
    this.#instances.set(spec.name, inst);
    this.#byClaim.set(claimName, inst);
    this.#sync.adopted(claimName);
    try {
      const seen = await this.#waits.until(inst, spec.startTimeoutMs, 'ready', (o) =>
        o.phase === 'ready' || o.phase === 'suspended' ? o : undefined,
      );
      // A session coming back to its claim after a gateway restart may find it suspended: resume it.
      const podIp = seen.phase === 'ready' ? seen.podIp : (await this.resume(spec.name)).host;
      if (seen.phase === 'ready') this.#exits.markReady(inst);
      this.#o.log.info({ instance: spec.name, claim: claimName, sandbox: seen.sandbox, podIp }, 'sandbox ready');
      return { name: spec.name, pid: null, incarnation: inst.uid, host: podIp, port: containerPort(cfg) };
    } catch (err) {
      // A claim this start made goes; one it took over (a returning session's, with its volumes) stays,
      // for the session's next request or the services' idle policy (service-sync.ts). Either way the
      // instance ends because its start failed, not because it was asked to: `requested` is false.
      inst.startFailed = true;
      if (created) await this.delete(spec.name).catch(() => {});
      else this.#release(inst);
      throw err;
    }
  }

  /** What the instance's start, pause or resume waits for the cluster to do, as observed now. */
  waitingOn(name: string): ClusterWait | undefined {
    const inst = this.#instances.get(name);
    return inst && this.#waits.waitingOn(inst);
  }

  async pause(name: string): Promise<void> {
    const inst = this.#mustGet(name);
    inst.ready = undefined; // a suspended sandbox's pod goes: no app exit
    const generation = await this.#waits.setMode(inst, 'Suspended');
    try {
      await this.#waits.until(
        inst,
        this.#timeout(),
        'suspended',
        (o) => (o.phase === 'suspended' ? o : undefined),
        generation,
      );
    } catch (err) {
      // Not observed suspended: the gateway takes it as running again, so the cluster must not suspend it
      // later behind its back (a controller that comes back would). Best effort: the error is the pause's.
      if (this.#instances.has(name)) await this.#waits.setMode(inst, 'Running').catch(() => {});
      if (this.#instances.has(name)) this.#exits.markReady(inst);
      throw err;
    }
  }

  async resume(name: string): Promise<InstanceAddress> {
    const inst = this.#mustGet(name);
    const generation = await this.#waits.setMode(inst, 'Running');
    const ready = await this.#waits.until(
      inst,
      this.#timeout(),
      'ready',
      (o) => (o.phase === 'ready' ? o : undefined),
      generation,
    );
    this.#exits.markReady(inst);
    return { host: ready.podIp, port: containerPort(inst.cfg) };
  }

  async delete(name: string): Promise<void> {
    const inst = this.#instances.get(name);
    if (!inst) return;
    inst.requested = true;
    this.#sync.deleteLater(inst.claim, inst.uid); // retried by the resync until it is gone
    await this.#o.client.delete(SANDBOX_CLAIM, this.#o.namespace, inst.claim);
    await this.#waiters
      .until(() => (this.#claimOf(inst) ? undefined : true), this.#timeout(), `claim ${inst.claim} to go`)
      .catch(() => {});
    this.#claimGone(inst.claim, inst.uid);
  }

  logs(_name: string): LogLine[] | undefined {
    return undefined; // pod output is the cluster's (kubectl logs)
  }

  onExit(listener: (name: string, exit: InstanceExit) => void): void {
    this.#listeners.push(listener);
  }

  /** Claims labelled as ours that no instance here owns, bound to a sandbox that runs or is suspended. */
  async list(): Promise<ObservedInstance[]> {
    await Promise.all([this.#claims.synced, this.#sandboxes.synced]);
    const out: ObservedInstance[] = [];
    for (const claim of this.#claims.list()) {
      if (this.#byClaim.has(claim.metadata.name) || claim.metadata.deletionTimestamp) continue;
      const found = this.#observed(claim);
      if (found) out.push(found);
    }
    return out;
  }

  /**
   * Rebinds the recorded instance to its claim when the claim is still the recorded one (same uid); a claim
   * still starting is waited for. Undefined when it is gone, replaced or not ours.
   */
  async adopt(record: InstanceIdentity): Promise<ObservedInstance | undefined> {
    if (this.#closed) throw new Error('runtime is closed');
    await Promise.all([this.#claims.synced, this.#sandboxes.synced]);
    if (this.#instances.has(record.name)) return undefined;
    const claim = claimOfRecord(this.#claims.list(), record);
    const cfg = this.#services.find((s) => s.name === record.service);
    if (!claim || !cfg) return undefined;
    const name = claim.metadata.name;
    if (this.#byClaim.has(name)) return undefined;
    const inst: Instance = { name: record.name, claim: name, uid: claim.metadata.uid, cfg, requested: false };
    this.#instances.set(inst.name, inst);
    this.#byClaim.set(name, inst);
    this.#sync.adopted(name);
    try {
      await this.#waits.until(inst, this.#timeout(), 'ready', (o) =>
        o.phase === 'ready' || o.phase === 'suspended' || o.phase === 'suspending' ? o : undefined,
      );
    } catch {
      this.#instances.delete(inst.name);
      this.#byClaim.delete(name);
      return undefined;
    }
    const now = this.#claimOf(inst);
    const found = now && this.#observed(now);
    if (found?.state === 'running') this.#exits.markReady(inst);
    this.#o.log.info({ instance: inst.name, claim: name }, 'claim adopted');
    return found ? { ...found, name: inst.name } : undefined;
  }

  /** Claims outlive the gateway in any case: detaching is closing. */
  detach(): Promise<void> {
    return this.close();
  }

  /** Stops watching. Claims outlive the gateway: a restarted gateway finds them (same session, same sandbox). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#sync.stop();
    this.#claims.stop();
    this.#sandboxes.stop();
    this.#exits.stop();
    this.#waiters.rejectAll(new Error('runtime is closed'));
  }

  /** A claim of ours as an observed instance (running or paused), or undefined when it is not bound yet. */
  #observed(claim: KubeResource): ObservedInstance | undefined {
    const cfg = this.#services.find((s) => s.name === claim.metadata.labels?.[LABELS.service]);
    return cfg && observedInstance(claim, this.#sandboxOf(claim), cfg.name, containerPort(cfg));
  }

  #claimOf(inst: Instance): KubeResource | undefined {
    const c = this.#claims.get(inst.claim);
    return c && c.metadata.uid === inst.uid ? c : undefined;
  }

  #sandboxOf(claim: KubeResource): KubeResource | undefined {
    const o = observe(claim, undefined);
    return o.phase === 'unbound' ? undefined : this.#sandboxes.get(o.sandbox);
  }

  #mustGet(name: string): Instance {
    const inst = this.#instances.get(name);
    if (!inst) throw new Error(`no instance ${name}`);
    return inst;
  }

  #timeout(): number {
    return this.#o.operationTimeoutMs ?? 60_000;
  }

  #claimSeen(claim: KubeResource): void {
    const inst = this.#byClaim.get(claim.metadata.name);
    // Same name, another uid: ours was deleted and made again by someone else.
    if (inst && inst.uid !== claim.metadata.uid) this.#claimGone(inst.claim, inst.uid);
    this.#waiters.check();
  }

  /** Stops managing the instance and leaves its claim to the cluster (an orphan again for `service-sync.ts`). */
  #release(inst: Instance): void {
    if (this.#byClaim.get(inst.claim) !== inst) return;
    this.#byClaim.delete(inst.claim);
    this.#instances.delete(inst.name);
    this.#o.log.warn({ instance: inst.name, claim: inst.claim }, 'claim released: its start failed, the claim stays');
    for (const l of this.#listeners) l(inst.name, { code: null, signal: null, requested: false });
    this.#waiters.check();
  }

  /** The claim `name` with `uid` is gone: its instance ends (asked for or not). */
  #claimGone(name: string, uid: string): void {
    const inst = this.#byClaim.get(name);
    if (inst && inst.uid === uid) {
      this.#byClaim.delete(name);
      this.#instances.delete(inst.name);
      this.#sync.gone(name);
      if (!inst.requested) this.#o.log.warn({ instance: inst.name, claim: name }, 'claim deleted from outside');
      const requested = inst.requested && !inst.startFailed;
      for (const l of this.#listeners) l(inst.name, { code: inst.end?.code ?? null, signal: null, requested });
    }
    this.#waiters.check();
  }

  /** A watched object changed: waits re-check, and a ready app that ended ends its instance. */
  #changed(): void {
    this.#waiters.check();
    this.#exits.check();
  }

  /** Its app ended by itself (`exit-watch.ts`): the instance ends, its claim deleted. */
  #appEnded(inst: Instance): void {
    this.#sync.deleteLater(inst.claim, inst.uid); // retried by the resync if this delete fails
    void this.#o.client.delete(SANDBOX_CLAIM, this.#o.namespace, inst.claim).catch(() => {});
    this.#claimGone(inst.claim, inst.uid);
  }
}
