/**
 * @module
 * Drives an instance's Sandbox and waits for it: sets its `operatingMode` (pause, resume), waits by watch
 * (`waiters.ts`) until its observed phase is the one wanted (a start fails at once when the app already
 * ended, `exit-watch.ts`), and says what the running wait waits for (`wait-reason.ts`). Owns no instance and
 * no informer: `kubernetes-runtime.ts` passes its views of the cluster.
 */
import type { Clock } from '../../common/clock.ts';
import { SANDBOX, SANDBOX_CLAIM } from '../../kube/agent-sandbox.ts';
import type { ObjectClient } from '../../kube/object-client.ts';
import type { KubeResource } from '../../kube/types.ts';
import type { ClusterWait } from '../runtime.ts';
import type { AppEnd } from './app-exit.ts';
import { type Observed, observe } from './observed.ts';
import { describeWait, type WaitGoal } from './wait-reason.ts';
import type { Waiters } from './waiters.ts';

/** What the waits read and write on an instance of the runtime. */
export interface WaitingInstance {
  name: string;
  claim: string;
  /** What its start, pause or resume waits for now, and since when (the runtime's clock). */
  wait?: { goal: WaitGoal; since: number };
}

/** Options of `SandboxWaits`. */
export interface SandboxWaitsOptions<I extends WaitingInstance> {
  client: ObjectClient;
  namespace: string;
  clock: Clock;
  waiters: Waiters;
  /** Whether the instance is still the runtime's. */
  has: (inst: I) => boolean;
  /** The instance's claim as observed now, when it is still its own (same uid). */
  claimOf: (inst: I) => KubeResource | undefined;
  /** The Sandbox the claim is bound to, as observed now. */
  sandboxOf: (claim: KubeResource) => KubeResource | undefined;
  /** The Sandbox named so, as observed now. */
  sandbox: (name: string) => KubeResource | undefined;
  /** How a starting Sandbox's app already ended, if it did (`exit-watch.ts`). */
  endedBeforeReady: (sandbox: KubeResource) => AppEnd | undefined;
}

/** Mode changes and waits on the runtime's Sandboxes. */
export class SandboxWaits<I extends WaitingInstance> {
  readonly #o: SandboxWaitsOptions<I>;

  constructor(options: SandboxWaitsOptions<I>) {
    this.#o = options;
  }

  /** What the instance's running wait waits for the cluster to do, as observed now. */
  waitingOn(inst: I): ClusterWait | undefined {
    if (!inst.wait) return undefined;
    const claim = this.#o.claimOf(inst);
    return describeWait(inst.wait.goal, inst.claim, claim, claim && this.#o.sandboxOf(claim), inst.wait.since);
  }

  /** Patches the instance's Sandbox to `mode`; answers the Sandbox's new generation. */
  async setMode(inst: I, mode: 'Running' | 'Suspended'): Promise<number> {
    const { client, namespace } = this.#o;
    const claim = this.#o.claimOf(inst) ?? (await client.get(SANDBOX_CLAIM, namespace, inst.claim));
    const sandbox = claim ? observe(claim, undefined) : undefined;
    if (!sandbox || sandbox.phase === 'unbound') throw new Error(`instance ${inst.name} has no sandbox`);
    const patched = await client.patch(SANDBOX, namespace, sandbox.sandbox, {
      spec: { operatingMode: mode },
    });
    if (!patched) throw new Error(`sandbox ${sandbox.sandbox} is gone`);
    return patched.metadata.generation ?? 0;
  }

  /** Waits until `pick` accepts the observed phase (re-checked on every watch event). */
  until<T>(
    inst: I,
    timeoutMs: number,
    what: WaitGoal,
    pick: (o: Observed) => T | undefined,
    minGeneration = 0,
  ): Promise<T> {
    const wait = { goal: what, since: this.#o.clock.now() };
    inst.wait = wait;
    const done = () => {
      if (inst.wait === wait) inst.wait = undefined;
    };
    const waiting = this.#o.waiters.until(
      () => {
        if (!this.#o.has(inst)) throw new Error(`instance ${inst.name} is gone`);
        const claim = this.#o.claimOf(inst);
        if (!claim) return undefined;
        const sandbox = this.#o.sandboxOf(claim);
        const o = observe(claim, sandbox);
        if (what === 'ready' && o.phase === 'starting' && sandbox) {
          const end = this.#o.endedBeforeReady(sandbox);
          if (end) throw new Error(`sandbox of ${inst.name} will not be ready: ${end.reason}`);
        }
        if (o.phase !== 'unbound' && minGeneration > 0) {
          const gen = this.#o.sandbox(o.sandbox)?.metadata.generation ?? 0;
          if (gen < minGeneration) return undefined;
        }
        return pick(o);
      },
      timeoutMs,
      `sandbox of ${inst.name} ${what}`,
    );
    waiting.then(done, done);
    return waiting;
  }
}
