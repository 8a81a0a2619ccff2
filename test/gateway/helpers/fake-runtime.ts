/**
 * @module
 * An in-memory `InstanceRuntime` for core tests: no processes, every call recorded, starts can be
 * held open or made to fail, and instances can be "killed from outside". Port 1 on loopback refuses
 * connections at once, so the pool's warm-up request returns immediately.
 */
import type {
  InstanceExit,
  InstanceRuntime,
  InstanceSpec,
  LogLine,
  StartedInstance,
} from '../../../src/runtime/runtime.ts';

/** A recorded runtime call, e.g. `pause svc-abcde`. */
export type Call = `${'start' | 'pause' | 'resume' | 'delete'} ${string}`;

/** The fake runtime. */
export class FakeRuntime implements InstanceRuntime {
  readonly calls: Call[] = [];
  readonly live = new Map<string, { paused: boolean; pid: number }>();
  /** The spec each instance was started with, by name. */
  readonly specs = new Map<string, InstanceSpec>();
  /** When set, starts wait for it. */
  gate: Promise<void> | undefined;
  /** When true, starts fail. */
  failStarts = false;
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
    this.live.set(spec.name, { paused: false, pid });
    if (this.dieAfterStart) queueMicrotask(() => this.kill(spec.name));
    return { name: spec.name, pid, host: '127.0.0.1', port: 1 };
  }
  async pause(name: string): Promise<void> {
    this.calls.push(`pause ${name}`);
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
