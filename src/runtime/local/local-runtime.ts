/**
 * @module
 * The local `InstanceRuntime`: each instance is a process spawned directly (no shell, so its pid is the
 * app's own) as the leader of its own process group and session, so it outlives the gateway. Pause = SIGSTOP
 * to the group, resume = SIGCONT, each resolved once /proc shows it; delete = SIGTERM then SIGKILL after a
 * grace period. Output goes to files (log-files.ts). Each live instance is recorded in `stateDir`
 * (orphans.ts), so a later runtime can `list` and `adopt` what a stopped or SIGKILLed gateway left.
 * With an `isolation` (isolation/sandbox.ts) each instance is spawned, paused and signalled through its
 * sandbox, and ends with this runtime: isolated instances are never detached nor adopted (see orphans.ts).
 * No scheduling; the gateway drives it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync } from 'node:fs';
import type { Logger } from '../../common/log.ts';
import type {
  InstanceExit,
  InstanceIdentity,
  InstanceRuntime,
  InstanceSpec,
  LogLine,
  ObservedInstance,
  StartedInstance,
} from '../runtime.ts';
import type { Isolation, Sandbox } from './isolation/sandbox.ts';
import type { LogBuffer } from './log-buffer.ts';
import { LogTail, openOutputFiles, outputPaths } from './log-files.ts';
import {
  defaultStateDir,
  ensureStateDir,
  forgetInstance,
  type InstanceRecord,
  isSameProcess,
  leftovers,
  ownerAlive,
  readRecord,
  recordInstance,
  statOf,
} from './orphans.ts';
import { instanceEnv } from './process-env.ts';
import { isStopped, killVerifiedMembers, observeState, signalGroup } from './process-group.ts';
import { leasePort, type PortLease, waitReady } from './readiness.ts';

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
   * Folder of the live-instance records and output files. Records of a live gateway are left alone, so
   * gateways may share it. @default `<tmpdir>/tether-runtime-<user>`
   */
  stateDir?: string;
  /** Sandboxes each instance (isolation/choose-isolation.ts builds it); plain process groups without. */
  isolation?: Isolation;
  /** The OS's pick of a free port (tests make it offer one port twice). @default pickFreePort */
  pickPort?: () => Promise<number>;
}

interface Proc {
  name: string;
  /** The ChildProcess when this runtime spawned it; null for an adopted one (watched through /proc). */
  child: ChildProcess | null;
  pid: number;
  record: InstanceRecord;
  logs: LogTail;
  requested: boolean;
  exited: Promise<void>;
  /** Reports the exit (once). */
  settle: (code: number | null, signal: string | null) => void;
  sandbox: Sandbox | undefined;
}

const HOST = '127.0.0.1';
/** How often output files are read and adopted processes checked (ms). */
const WATCH_MS = 500;

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
  readonly #watch: NodeJS.Timeout;
  readonly #isolation: Isolation | undefined;
  readonly #pickPort: (() => Promise<number>) | undefined;
  readonly #killAllSync = () => {
    for (const p of this.#procs.values()) {
      p.sandbox?.signal('SIGKILL');
      signalGroup(p.pid, 'SIGKILL');
    }
  };
  #closed: Promise<void> | undefined;

  constructor(options: LocalRuntimeOptions) {
    this.#log = options.log;
    this.#graceMs = options.graceMs ?? 5000;
    this.#logLines = options.logLines ?? 500;
    this.#keepEnded = options.keepEnded ?? 50;
    if (!(this.#graceMs >= 0)) throw new Error(`Cannot run instances as 'graceMs' must be >= 0: got ${this.#graceMs}`);
    this.#stateDir = options.stateDir ?? defaultStateDir();
    this.#isolation = options.isolation;
    this.#pickPort = options.pickPort;
    ensureStateDir(this.#stateDir);
    this.#watch = setInterval(() => this.#check(), WATCH_MS);
    this.#watch.unref();
    // Backstop: a gateway exiting without close() or detach() leaves no instance behind (after SIGKILL the
    // next gateway adopts or deletes them: list()).
    process.on('exit', this.#killAllSync);
  }

  async start(spec: InstanceSpec): Promise<StartedInstance> {
    if (this.#closed) throw new Error('runtime is closed');
    if (!spec.argv[0]) throw new Error(`instance ${spec.name} has no command`);
    const sandbox = await this.#isolation?.prepare(spec);
    // A sandbox has an address of its own; a plain process holds its port (readiness.ts) until it listens.
    const lease = sandbox?.port ? undefined : await leasePort(this.#pickPort);
    try {
      return await this.#launch(spec, sandbox, sandbox?.port || (lease as PortLease).port);
    } finally {
      lease?.release();
    }
  }

  async #launch(spec: InstanceSpec, sandbox: Sandbox | undefined, port: number): Promise<StartedInstance> {
    const [file, ...args] = spec.argv as [string, ...string[]]; // checked by start
    const host = sandbox?.host ?? HOST;
    if (this.#closed) {
      await sandbox?.release();
      throw new Error('runtime is closed'); // closed while preparing: spawn nothing
    }
    const env = instanceEnv(spec, port);
    const launch = sandbox?.launch(spec.argv, env) ?? { file, args, env, cwd: spec.workingDir };
    let fds: ReturnType<typeof openOutputFiles>;
    try {
      fds = openOutputFiles(this.#stateDir, spec.name); // created 0600 here, whoever writes them
    } catch (err) {
      // Its state folder unusable (removed, full, read-only): nothing spawned, the sandbox given back.
      await sandbox?.release();
      throw new Error(`instance ${spec.name} could not start: its output files: ${(err as Error).message}`);
    }
    let child: ChildProcess;
    try {
      child =
        launch.startWaiting?.(outputPaths(this.#stateDir, spec.name)) ??
        spawn(launch.file, launch.args, {
          cwd: launch.cwd,
          env: launch.env,
          detached: true,
          stdio: ['ignore', fds.out, fds.err],
        });
    } catch (err) {
      // Refused before any process existed: nothing runs. Node's message quotes the value, which may be a secret.
      await sandbox?.release();
      const e = err as NodeJS.ErrnoException;
      const why = e.code === 'ERR_INVALID_ARG_VALUE' ? 'an argument or environment value holds a NUL byte' : e.message;
      throw new Error(`instance ${spec.name} could not start '${file}': ${why}`);
    } finally {
      closeSync(fds.out);
      closeSync(fds.err);
    }
    const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
    if (child.pid === undefined) {
      const err = await spawnError;
      forgetInstance(this.#stateDir, spec.name);
      await sandbox?.release();
      throw new Error(`instance ${spec.name} could not start '${file}': ${err.message}`);
    }
    const pid = child.pid;
    sandbox?.spawned(pid);
    const record: InstanceRecord = {
      instance: spec.name,
      service: spec.service,
      pgid: pid,
      startTime: statOf(pid)?.startTime ?? '',
      host,
      port,
      owner: process.pid,
      ...(sandbox ? { isolated: true } : {}),
    };
    const gone = new AbortController();
    let exitInfo: { code: number | null; signal: string | null } | undefined;
    const logs = new LogTail(this.#stateDir, spec.name, this.#logLines);
    const proc = this.#track(spec.name, child, record, logs, sandbox);
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal };
      gone.abort();
      proc.settle(code, signal);
    });
    this.#write(record);
    this.#log.info({ instance: spec.name, pid, host, port }, 'instance spawned');
    const ready = await waitReady({
      host,
      port,
      path: spec.readinessPath,
      timeoutMs: spec.startTimeoutMs,
      signal: gone.signal,
    });
    if (ready) return { name: spec.name, pid, incarnation: record.startTime || null, host, port };
    if (exitInfo) {
      throw new Error(
        `instance ${spec.name} exited before it was ready (code ${exitInfo.code}, signal ${exitInfo.signal})`,
      );
    }
    // Ended because its start failed, not because anyone asked: its onExit says requested false.
    await this.#stop(spec.name, false);
    throw new Error(`instance ${spec.name} was not ready within ${spec.startTimeoutMs} ms`);
  }

  async pause(name: string): Promise<void> {
    const p = this.#procs.get(name);
    if (!p) throw new Error(`instance ${name} is not running`);
    if (p.sandbox) return p.sandbox.pause(); // resolves once frozen (cgroup freezer) or stopped
    signalGroup(p.pid, 'SIGSTOP');
    await observeState(p.pid, isStopped, `instance ${name} did not stop`);
  }

  async resume(name: string): Promise<void> {
    const p = this.#procs.get(name);
    if (!p) throw new Error(`instance ${name} is not running`);
    if (p.sandbox) return p.sandbox.resume();
    signalGroup(p.pid, 'SIGCONT');
    await observeState(p.pid, (s) => !isStopped(s), `instance ${name} did not continue`);
  }

  delete(name: string): Promise<void> {
    return this.#stop(name, true);
  }

  /** Graceful stop, then forced after the grace period; `requested`: asked by `delete` (else a failed start). */
  async #stop(name: string, requested: boolean): Promise<void> {
    const p = this.#procs.get(name);
    if (!p) return;
    p.requested = requested;
    const kill = (signal: NodeJS.Signals) => (p.sandbox ? p.sandbox.signal(signal) : signalGroup(p.pid, signal));
    kill('SIGTERM');
    if (!p.sandbox) signalGroup(p.pid, 'SIGCONT'); // a stopped process must run to handle SIGTERM
    const timer = setTimeout(() => kill('SIGKILL'), this.#graceMs);
    // An adopted process is not our child: no 'exit' event, so watch /proc closely meanwhile.
    const poll = p.child === null ? setInterval(() => this.#checkOne(p), 20) : undefined;
    await p.exited;
    clearTimeout(timer);
    if (poll) clearInterval(poll);
  }

  logs(name: string): LogLine[] | undefined {
    const live = this.#procs.get(name);
    if (live) {
      live.logs.poll();
      return live.logs.buffer.lines();
    }
    return this.#ended.get(name)?.lines();
  }

  onExit(listener: (name: string, exit: InstanceExit) => void): void {
    this.#listeners.push(listener);
  }

  /** Leftovers of dead gateways; isolated ones are killed here, never listed (they cannot be adopted). */
  async list(): Promise<ObservedInstance[]> {
    const out: ObservedInstance[] = [];
    for (const rec of leftovers(this.#stateDir)) {
      if (this.#procs.has(rec.instance)) continue;
      if (rec.isolated) {
        const pids = killVerifiedMembers(rec.pgid, rec.instance);
        forgetInstance(this.#stateDir, rec.instance);
        this.#log.warn({ instance: rec.instance, pids }, 'killed a leftover isolated instance (not adoptable)');
        continue;
      }
      out.push(observed(rec));
    }
    return out;
  }

  async adopt(identity: InstanceIdentity): Promise<ObservedInstance | undefined> {
    if (this.#closed) throw new Error('runtime is closed');
    if (this.#procs.has(identity.name)) return undefined;
    const rec = readRecord(this.#stateDir, identity.name);
    if (rec === undefined || rec.isolated) return undefined;
    if (rec.pgid !== identity.pid || rec.startTime !== identity.incarnation) return undefined;
    // A live owner is another running gateway: its instances are not ours to take.
    if (ownerAlive(rec.owner) || !isSameProcess(rec.pgid, rec.startTime, rec.instance)) {
      return undefined;
    }
    const record = { ...rec, owner: process.pid };
    this.#write(record);
    const logs = new LogTail(this.#stateDir, rec.instance, this.#logLines, true);
    this.#track(rec.instance, null, record, logs, undefined);
    this.#log.info({ instance: rec.instance, pid: rec.pgid }, 'instance adopted');
    return observed(record);
  }

  close(): Promise<void> {
    this.#closed ??= (async () => {
      await Promise.all([...this.#procs.keys()].map((n) => this.delete(n)));
      clearInterval(this.#watch);
      await this.#isolation?.close();
      process.off('exit', this.#killAllSync);
    })();
    return this.#closed;
  }

  /** Leaves plain instances running for a later runtime; isolated ones end here (see the module comment). */
  detach(): Promise<void> {
    this.#closed ??= (async () => {
      clearInterval(this.#watch);
      const isolated = [...this.#procs.values()].filter((p) => p.sandbox !== undefined);
      for (const p of this.#procs.values()) {
        if (p.sandbox) continue;
        p.logs.end();
        p.child?.removeAllListeners('exit');
        p.child?.unref();
        // Owner 0: managed by nobody now, so the next runtime may adopt it even while this process lives on.
        this.#write({ ...p.record, owner: 0 });
        this.#procs.delete(p.name);
      }
      await Promise.all(isolated.map((p) => this.delete(p.name)));
      await this.#isolation?.close();
      process.off('exit', this.#killAllSync);
    })();
    return this.#closed;
  }

  /** Starts managing one process (spawned or adopted). */
  #track(
    name: string,
    child: ChildProcess | null,
    record: InstanceRecord,
    logs: LogTail,
    sandbox: Sandbox | undefined,
  ): Proc {
    let resolveExited!: () => void;
    let settled = false;
    const proc: Proc = {
      name,
      child,
      pid: record.pgid,
      record,
      logs,
      requested: false,
      sandbox,
      exited: new Promise<void>((r) => {
        resolveExited = r;
      }),
      settle: (code, signal) => {
        if (settled || this.#procs.get(name) !== proc) return;
        settled = true;
        logs.end();
        signalGroup(proc.pid, 'SIGKILL'); // stragglers of the group
        void (async () => {
          await sandbox?.release();
          this.#procs.delete(name);
          forgetInstance(this.#stateDir, name);
          this.#remember(name, logs.buffer);
          this.#log.info({ instance: name, pid: proc.pid, code, signal, requested: proc.requested }, 'instance exited');
          for (const l of this.#listeners) l(name, { code, signal, requested: proc.requested });
          resolveExited();
        })();
      },
    };
    this.#procs.set(name, proc);
    return proc;
  }

  #write(record: InstanceRecord): void {
    try {
      recordInstance(this.#stateDir, record);
    } catch (err) {
      this.#log.warn({ instance: record.instance, err: (err as Error).message }, 'instance record not written');
    }
  }

  /** The periodic pass: read output files, notice adopted processes that ended. */
  #check(): void {
    for (const p of [...this.#procs.values()]) {
      p.logs.poll();
      this.#checkOne(p);
    }
  }

  #checkOne(p: Proc): void {
    if (p.child !== null) return;
    if (!isSameProcess(p.pid, p.record.startTime, p.name)) p.settle(null, null);
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

function observed(rec: InstanceRecord): ObservedInstance {
  return {
    name: rec.instance,
    service: rec.service,
    pid: rec.pgid,
    incarnation: rec.startTime || null,
    host: rec.host,
    port: rec.port,
    state: isStopped(statOf(rec.pgid)?.state) ? 'paused' : 'running',
  };
}
