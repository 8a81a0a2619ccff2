/**
 * @module
 * The local `InstanceRuntime`: each instance is a process spawned directly (no shell, so its pid is the
 * app's own) as the leader of its own process group. Pause = SIGSTOP to the group, resume = SIGCONT,
 * delete = SIGTERM then SIGKILL after a grace period. Output is kept in a bounded buffer. Each live
 * instance is recorded in `stateDir`, so the next runtime reaps what a SIGKILLed gateway left (orphans.ts).
 * No scheduling; the gateway (src/gateway/gateway.ts) drives it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { Logger } from '../../common/log.ts';
import type { InstanceExit, InstanceRuntime, InstanceSpec, LogLine, StartedInstance } from '../runtime.ts';
import { LogBuffer } from './log-buffer.ts';
import { defaultStateDir, forgetInstance, reapOrphans, recordInstance } from './orphans.ts';
import { instanceEnv } from './process-env.ts';
import { pickFreePort, waitReady } from './readiness.ts';

/** Options of `LocalRuntime`. */
export interface LocalRuntimeOptions {
  log: Logger;
  /** Time between SIGTERM and SIGKILL on delete (ms). @default 5000 */
  graceMs?: number;
  /** Output lines kept per instance. @default 500 */
  logLines?: number;
  /** How many ended instances keep their logs visible. @default 50 */
  keepEnded?: number;
  /**
   * Folder of the live-instance records; at construction, instances left there by a dead gateway are killed.
   * Records of a live gateway are left alone, so gateways may share it. @default `<tmpdir>/tether-runtime-<user>`
   */
  stateDir?: string;
}

interface Proc {
  name: string;
  child: ChildProcess;
  pid: number;
  logs: LogBuffer;
  requested: boolean;
  exited: Promise<void>;
}

const HOST = '127.0.0.1';
/** How long a start that failed waits for the rest of the instance's output (a grandchild may hold its pipes). */
const STDIO_DRAIN_MS = 1000;

/** Runs instances as local process groups. */
export class LocalRuntime implements InstanceRuntime {
  readonly #procs = new Map<string, Proc>();
  readonly #ended = new Map<string, LogBuffer>();
  readonly #listeners: Array<(name: string, exit: InstanceExit) => void> = [];
  readonly #log: Logger;
  readonly #graceMs: number;
  readonly #logLines: number;
  readonly #keepEnded: number;
  readonly #stateDir: string;
  readonly #killAllSync = () => {
    for (const p of this.#procs.values()) signalGroup(p.pid, 'SIGKILL');
  };
  #closed: Promise<void> | undefined;

  constructor(options: LocalRuntimeOptions) {
    this.#log = options.log;
    this.#graceMs = options.graceMs ?? 5000;
    this.#logLines = options.logLines ?? 500;
    this.#keepEnded = options.keepEnded ?? 50;
    if (!(this.#graceMs >= 0)) throw new Error(`Cannot run instances as 'graceMs' must be >= 0: got ${this.#graceMs}`);
    this.#stateDir = options.stateDir ?? defaultStateDir();
    reapOrphans(this.#stateDir, this.#log);
    // Backstop: whatever happens, an exiting gateway leaves no instance behind (SIGKILL: see reapOrphans).
    process.on('exit', this.#killAllSync);
  }

  async start(spec: InstanceSpec): Promise<StartedInstance> {
    if (this.#closed) throw new Error('runtime is closed');
    const [file, ...args] = spec.argv;
    if (!file) throw new Error(`instance ${spec.name} has no command`);
    const port = await pickFreePort();
    if (this.#closed) throw new Error('runtime is closed'); // closed while picking a port: spawn nothing
    const logs = new LogBuffer(this.#logLines);
    const child = spawn(file, args, {
      cwd: spec.workingDir,
      env: instanceEnv(spec, port),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
    if (child.pid === undefined) {
      const err = await spawnError;
      throw new Error(`instance ${spec.name} could not start '${file}': ${err.message}`);
    }
    child.stdout?.on('data', (c: Buffer) => logs.write('stdout', c));
    child.stderr?.on('data', (c: Buffer) => logs.write('stderr', c));
    const gone = new AbortController();
    // 'close' comes after 'exit' once stdout and stderr are read to their end: the last lines of a
    // failed start (its real cause) are in the buffer only then.
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    void closed.then(() => logs.end());
    let exitInfo: { code: number | null; signal: string | null } | undefined;
    const proc: Proc = { name: spec.name, child, pid: child.pid, logs, requested: false, exited: Promise.resolve() };
    proc.exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        exitInfo = { code, signal };
        gone.abort();
        logs.end();
        signalGroup(proc.pid, 'SIGKILL'); // stragglers of the group
        this.#procs.delete(spec.name);
        forgetInstance(this.#stateDir, spec.name);
        this.#remember(spec.name, logs);
        this.#log.info(
          { instance: spec.name, pid: proc.pid, code, signal, requested: proc.requested },
          'instance exited',
        );
        for (const l of this.#listeners) l(spec.name, { code, signal, requested: proc.requested });
        resolve();
      });
    });
    this.#procs.set(spec.name, proc);
    try {
      recordInstance(this.#stateDir, spec.name, proc.pid);
    } catch (err) {
      this.#log.warn({ instance: spec.name, err: (err as Error).message }, 'instance record not written');
    }
    this.#log.info({ instance: spec.name, pid: proc.pid, port }, 'instance spawned');
    const ready = await waitReady({
      host: HOST,
      port,
      path: spec.readinessPath,
      timeoutMs: spec.startTimeoutMs,
      signal: gone.signal,
    });
    if (ready) return { name: spec.name, pid: proc.pid, host: HOST, port };
    if (exitInfo) {
      await Promise.race([closed, new Promise((r) => setTimeout(r, STDIO_DRAIN_MS).unref())]);
      throw new Error(
        `instance ${spec.name} exited before it was ready (code ${exitInfo.code}, signal ${exitInfo.signal})`,
      );
    }
    await this.delete(spec.name);
    throw new Error(`instance ${spec.name} was not ready within ${spec.startTimeoutMs} ms`);
  }

  async pause(name: string): Promise<void> {
    const p = this.#procs.get(name);
    if (p) signalGroup(p.pid, 'SIGSTOP');
  }

  async resume(name: string): Promise<void> {
    const p = this.#procs.get(name);
    if (p) signalGroup(p.pid, 'SIGCONT');
  }

  async delete(name: string): Promise<void> {
    const p = this.#procs.get(name);
    if (!p) return;
    p.requested = true;
    signalGroup(p.pid, 'SIGTERM');
    signalGroup(p.pid, 'SIGCONT'); // a stopped process must run to handle SIGTERM
    const timer = setTimeout(() => signalGroup(p.pid, 'SIGKILL'), this.#graceMs);
    await p.exited;
    clearTimeout(timer);
  }

  logs(name: string): LogLine[] | undefined {
    return (this.#procs.get(name)?.logs ?? this.#ended.get(name))?.lines();
  }

  onExit(listener: (name: string, exit: InstanceExit) => void): void {
    this.#listeners.push(listener);
  }

  close(): Promise<void> {
    this.#closed ??= (async () => {
      await Promise.all([...this.#procs.keys()].map((n) => this.delete(n)));
      process.off('exit', this.#killAllSync);
    })();
    return this.#closed;
  }

  #remember(name: string, logs: LogBuffer): void {
    this.#ended.set(name, logs);
    while (this.#ended.size > this.#keepEnded) {
      const oldest = this.#ended.keys().next().value;
      if (oldest === undefined) break;
      this.#ended.delete(oldest);
    }
  }
}

/** Sends `signal` to the process group led by `pid`; a group already gone is fine. */
function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: nothing left to signal
  }
}
