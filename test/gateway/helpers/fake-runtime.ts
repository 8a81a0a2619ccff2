/**
 * @module
 * An in-memory `InstanceRuntime` for core tests: no processes, every call recorded, starts can be
 * held open or made to fail, and instances can be "killed from outside". Port 1 on loopback refuses
 * connections at once, so the pool's warm-up request returns immediately.
 */
import type {
  InstanceExit,
  InstanceIdentity,
  InstanceRuntime,
  InstanceSpec,
  LogLine,
  ObservedInstance,
  StartedInstance,
} from '../../../src/runtime/runtime.ts';

/** A recorded runtime call, e.g. `pause svc-abcde`. */
export type Call = `${'start' | 'pause' | 'resume' | 'delete' | 'adopt'} ${string}`;

/** The fake runtime. */
export class FakeRuntime implements InstanceRuntime {
  readonly calls: Call[] = [];
  readonly live = new Map<string, { paused: boolean; pid: number; service: string; port: number }>();
  /** Instances a previous gateway left: listed, and taken back by `adopt` when pid and incarnation match. */
  readonly leftovers = new Map<string, ObservedInstance>();
  /** When set, pauses wait for it (a pause that takes time to be observed, as on Kubernetes). */
  pauseGate: Promise<void> | undefined;
  detached = false;
  /** The spec each instance was started with, by name. */
  readonly specs = new Map<string, InstanceSpec>();
  /** When set, starts wait for it. */
  gate: Promise<void> | undefined;
  /** When true, starts fail. */
  failStarts = false;
  /** When true, pauses fail (the instance keeps running). */
  failPauses = false;
  /** When true, each instance dies on its own right after its start resolved (before any warm-up). */
  dieAfterStart = false;
  #pid = 1000;
  readonly #listeners: Array<(name: string, exit: InstanceExit) => void> = [];

  async start(spec: InstanceSpec): Promise<StartedInstance> {
    this.calls.push(`start ${spec.name}`);
    this.specs.set(spec.name, spec);
    if (this.gate) await this.gate;
    if (this.failStarts) throw new Error(`instance ${spec.name} exited before it was ready`);
    const pid = ++this.#pid;
    this.live.set(spec.name, { paused: false, pid, service: spec.service, port: 1 });
    if (this.dieAfterStart) queueMicrotask(() => this.kill(spec.name));
    return { name: spec.name, pid, incarnation: `t${pid}`, host: '127.0.0.1', port: 1 };
  }
  async pause(name: string): Promise<void> {
    this.calls.push(`pause ${name}`);
    if (this.pauseGate) await this.pauseGate;
    if (this.failPauses) throw new Error(`cannot pause ${name}`);
    const i = this.live.get(name);
    if (i) i.paused = true;
  }
  async resume(name: string): Promise<void> {
    this.calls.push(`resume ${name}`);
    const i = this.live.get(name);
    if (i) i.paused = false;
  }
  async delete(name: string): Promise<void> {
    this.calls.push(`delete ${name}`);
    if (this.live.delete(name)) this.#emit(name, { code: 0, signal: 'SIGTERM', requested: true });
  }
  async list(): Promise<ObservedInstance[]> {
    return [...this.leftovers.values()].map((i) => ({ ...i }));
  }
  async adopt(record: InstanceIdentity): Promise<ObservedInstance | undefined> {
    this.calls.push(`adopt ${record.name}`);
    const found = this.leftovers.get(record.name);
    if (!found || found.pid !== record.pid || found.incarnation !== record.incarnation) return undefined;
    this.leftovers.delete(record.name);
    this.live.set(found.name, {
      paused: found.state === 'paused',
      pid: found.pid ?? 0,
      service: found.service,
      port: found.port,
    });
    return { ...found };
  }
  async detach(): Promise<void> {
    this.detached = true;
  }
  /** The instance dies on its own. */
  kill(name: string): void {
    if (this.live.delete(name)) this.#emit(name, { code: null, signal: 'SIGKILL', requested: false });
  }
  logs(name: string): LogLine[] | undefined {
    return this.live.has(name) ? [] : undefined;
  }
  onExit(listener: (name: string, exit: InstanceExit) => void): void {
    this.#listeners.push(listener);
  }
  async close(): Promise<void> {
    for (const name of [...this.live.keys()]) await this.delete(name);
  }
  /** Calls of one kind. */
  count(kind: 'start' | 'pause' | 'resume' | 'delete'): number {
    return this.calls.filter((c) => c.startsWith(`${kind} `)).length;
  }
  #emit(name: string, exit: InstanceExit): void {
    for (const l of this.#listeners) l(name, exit);
  }
}
