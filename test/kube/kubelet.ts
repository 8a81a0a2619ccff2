/**
 * @module
 * The double's kubelet: each Pod runs as a local process (its first container's command and args) on a
 * loopback address of its own (127.A.B.C, the pod IP), so a proxy to "pod IP + container port" is a
 * real connection. Processes share one network namespace here, so the pod's address is passed as
 * `HOST` (what 0.0.0.0 means inside a real pod). Ready = the container port accepts a connection (or
 * the readiness probe's path answers 2xx). A container that exits is restarted as the pod's `restartPolicy`
 * says (Always by default: after a back-off of 10 s, doubling to 5 min) and its status reads as the real
 * kubelet writes it (`podStatus`: phase, Ready conditions, `containerStatuses[]` with `state` running /
 * waiting CrashLoopBackOff / terminated, `lastState.terminated{exitCode,reason}`, `restartCount`).
 * Used by `controller.ts`; every process is killed on `stopAll`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { connect } from 'node:net';
import { constants as osConstants } from 'node:os';
import type { WireObject } from './objects.ts';

interface Container {
  name?: string;
  image?: string;
  command?: string[];
  args?: string[];
  env?: { name: string; value?: string }[];
  workingDir?: string;
  ports?: { containerPort?: number }[];
  readinessProbe?: { httpGet?: { path?: string; port?: number } };
}

/** A container's end, as `state.terminated` / `lastState.terminated` show it. */
interface Terminated {
  exitCode: number;
  /** `Completed` for exit code 0, else `Error`. */
  reason: string;
  startedAt: string;
  finishedAt: string;
}

interface Running {
  /** `namespace/name` of the pod. */
  pod: string;
  podName: string;
  namespace: string;
  uid: string;
  container: Container;
  restartPolicy: 'Always' | 'OnFailure' | 'Never';
  /** Undefined until the start delay passed, and between an exit and its restart. */
  child: ChildProcess | undefined;
  ip: string;
  ready: boolean;
  /** The current container process exited (and was not restarted yet). */
  done: boolean;
  stopping?: boolean;
  exited: Promise<void>;
  startedAt?: string;
  /** The current container's end when it ended and will not be restarted (`state.terminated`). */
  terminated?: Terminated;
  /** The previous container's end (`lastState.terminated`), once restarted or waiting to be. */
  last?: Terminated;
  restartCount: number;
  /** Waiting to be restarted (`state.waiting` CrashLoopBackOff). */
  backoffMs?: number;
  restartTimer?: NodeJS.Timeout;
}

/** The status fields the kubelet owns on a Pod, in the API's wire format. */
export interface PodStatus {
  phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed';
  conditions: { type: string; status: 'True' | 'False'; reason?: string }[];
  podIP: string;
  podIPs: { ip: string }[];
  containerStatuses: Record<string, unknown>[];
}

const PROBE_EVERY_MS = 20;
/** The kubelet's restart back-off: 10 s, doubling, at most 5 min. */
const BACKOFF_FIRST_MS = 10_000;
const BACKOFF_MAX_MS = 300_000;
const used = new Set<string>();

/** A fresh loopback address for a pod: 127.A.B.C with A in 100..199 (rarely used by anything else). */
export function allocatePodIp(): string {
  for (;;) {
    const r = () => Math.floor(Math.random() * 254) + 1;
    const ip = `127.${100 + Math.floor(Math.random() * 100)}.${r()}.${r()}`;
    if (!used.has(ip)) {
      used.add(ip);
      return ip;
    }
  }
}

/** Runs pods as processes. */
export class FakeKubelet {
  readonly #pods = new Map<string, Running>(); // pod uid -> process
  #stopped = false;
  // Backstop: a test process that exits leaves no pod process behind.
  readonly #killAll = () => {
    for (const p of this.#pods.values()) signal(p.child, 'SIGKILL');
  };

  readonly #startDelayMs: number;

  /** @param startDelayMs how long a pod takes to start its process (scheduling, image, runtime) @default 0 */
  constructor(startDelayMs = 0) {
    this.#startDelayMs = startDelayMs;
    process.on('exit', this.#killAll);
  }

  /** The pod's IP while its process is known, whether it is ready, and whether it exited. */
  state(podUid: string): { ip: string; ready: boolean; exited: boolean } | undefined {
    const p = this.#pods.get(podUid);
    return p ? { ip: p.ip, ready: p.ready, exited: p.done } : undefined;
  }

  /** The Pod's status as the kubelet reports it, or undefined for a pod it does not run. */
  podStatus(podUid: string): PodStatus | undefined {
    const p = this.#pods.get(podUid);
    if (!p) return undefined;
    const name = p.container.name ?? 'app';
    let state: Record<string, unknown>;
    if (p.terminated) state = { terminated: p.terminated };
    else if (p.child && !p.done) state = { running: { startedAt: p.startedAt } };
    else if (p.backoffMs !== undefined) {
      state = {
        waiting: {
          reason: 'CrashLoopBackOff',
          message: `back-off ${p.backoffMs / 1000}s restarting failed container=${name} pod=${p.podName}_${p.namespace}(${p.uid})`,
        },
      };
    } else state = { waiting: { reason: 'ContainerCreating' } };
    const status = {
      name,
      image: p.container.image ?? '',
      ready: p.ready,
      started: Boolean(p.child && !p.done),
      restartCount: p.restartCount,
      state,
      lastState: p.last ? { terminated: p.last } : {},
    };
    const phase = p.terminated
      ? p.terminated.exitCode === 0
        ? 'Succeeded'
        : 'Failed'
      : p.startedAt !== undefined
        ? 'Running'
        : 'Pending';
    const flag = (on: boolean) => (on ? 'True' : 'False');
    return {
      phase,
      conditions: [
        { type: 'PodScheduled', status: 'True' },
        { type: 'Ready', status: flag(p.ready), ...(p.ready ? {} : { reason: 'ContainersNotReady' }) },
        { type: 'ContainersReady', status: flag(p.ready), ...(p.ready ? {} : { reason: 'ContainersNotReady' }) },
      ],
      podIP: p.ip,
      podIPs: [{ ip: p.ip }],
      containerStatuses: [status],
    };
  }

  /** Kills the container process of pod `namespace/name` with `sig`, as an OOM kill or a crash would (tests). */
  killContainer(namespace: string, name: string, sig: NodeJS.Signals = 'SIGKILL'): boolean {
    for (const p of this.#pods.values()) {
      if (p.pod === `${namespace}/${name}` && p.child && !p.done) {
        signal(p.child, sig);
        return true;
      }
    }
    return false;
  }

  /** Uids of the pods it runs (or ran, until stopped). */
  uids(): string[] {
    return [...this.#pods.keys()];
  }

  /**
   * Starts the pod's process (once per uid), after the start delay. `changed` is called when it becomes
   * ready or exits.
   * @returns the pod IP
   */
  run(pod: WireObject, changed: () => void): string {
    const existing = this.#pods.get(pod.metadata.uid);
    if (existing) return existing.ip;
    const spec = pod.spec as { containers?: Container[]; restartPolicy?: string } | undefined;
    const c = spec?.containers?.[0] ?? {};
    const argv = [...(c.command ?? []), ...(c.args ?? [])];
    const ip = allocatePodIp();
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' };
    for (const e of c.env ?? []) env[e.name] = e.value ?? '';
    env.HOST = ip;
    const policy = spec?.restartPolicy;
    const running: Running = {
      pod: `${pod.metadata.namespace}/${pod.metadata.name}`,
      podName: pod.metadata.name,
      namespace: pod.metadata.namespace,
      uid: pod.metadata.uid,
      container: c,
      restartPolicy: policy === 'Never' || policy === 'OnFailure' ? policy : 'Always',
      child: undefined,
      ip,
      ready: false,
      done: false,
      exited: Promise.resolve(),
      restartCount: 0,
    };
    this.#pods.set(pod.metadata.uid, running);
    const live = () => this.#pods.get(pod.metadata.uid) === running && !running.stopping && !this.#stopped;
    const launch = () => {
      if (!live()) return;
      running.backoffMs = undefined;
      running.done = false;
      running.startedAt = now();
      const child = spawn(argv[0] ?? 'false', argv.slice(1), {
        cwd: c.workingDir ?? process.cwd(),
        env,
        detached: true,
        stdio: 'ignore',
      });
      child.on('error', () => {}); // a missing command exits the container (below)
      running.child = child;
      const ended = new Promise<{ code: number | null; sig: NodeJS.Signals | null }>((resolve) =>
        child.once('exit', (code, sig) => resolve({ code, sig })),
      );
      running.exited = ended.then(() => {});
      void ended.then(({ code, sig }) => {
        running.done = true;
        running.ready = false;
        if (!live()) return;
        // What the container runtime reports: the exit code, or 128 + the signal number.
        const exitCode = code ?? 128 + (sig ? (osConstants.signals[sig] ?? 0) : 0);
        const end: Terminated = {
          exitCode,
          reason: exitCode === 0 ? 'Completed' : 'Error',
          startedAt: running.startedAt ?? now(),
          finishedAt: now(),
        };
        const restart = running.restartPolicy === 'Always' || (running.restartPolicy === 'OnFailure' && exitCode !== 0);
        if (!restart) running.terminated = end;
        else {
          running.last = end;
          running.child = undefined;
          running.backoffMs = Math.min(BACKOFF_FIRST_MS * 2 ** running.restartCount, BACKOFF_MAX_MS);
          running.restartTimer = setTimeout(() => {
            running.restartCount++;
            launch();
            changed();
          }, running.backoffMs);
          running.restartTimer.unref();
        }
        changed();
      });
      const port = c.ports?.[0]?.containerPort ?? 8080;
      void this.#probe(running, child, port, c.readinessProbe?.httpGet?.path).then((ok) => {
        if (ok) {
          running.ready = true;
          changed();
        }
      });
    };
    if (this.#startDelayMs > 0) setTimeout(launch, this.#startDelayMs).unref();
    else launch();
    return ip;
  }

  /** True while a process of pod `namespace/name` has not exited (stopping included). */
  hasProcess(namespace: string, name: string): boolean {
    for (const p of this.#pods.values()) if (p.pod === `${namespace}/${name}` && !p.done && p.child) return true;
    return false;
  }

  /** Stops the pod's process (SIGTERM, SIGKILL after 1 s); forgets it once it exited, then calls `changed`. */
  async stop(podUid: string, changed?: () => void): Promise<void> {
    const p = this.#pods.get(podUid);
    if (!p || p.stopping) return;
    p.stopping = true;
    clearTimeout(p.restartTimer);
    if (!p.child || p.done) {
      // Not started yet: nothing to kill.
      this.#pods.delete(podUid);
      used.delete(p.ip);
      changed?.();
      return;
    }
    signal(p.child, 'SIGTERM');
    const timer = setTimeout(() => signal(p.child, 'SIGKILL'), 1000);
    await p.exited;
    clearTimeout(timer);
    this.#pods.delete(podUid);
    used.delete(p.ip);
    changed?.();
  }

  /** Kills every pod process. */
  async stopAll(): Promise<void> {
    this.#stopped = true;
    await Promise.all([...this.#pods.keys()].map((uid) => this.stop(uid)));
    process.off('exit', this.#killAll);
  }

  /** Probes until ready (true) or until this container process exits (false). */
  async #probe(p: Running, child: ChildProcess, port: number, path: string | undefined): Promise<boolean> {
    let exited = false;
    void p.exited.then(() => {
      exited = true;
    });
    while (!exited && !this.#stopped && p.child === child) {
      if (await probeOnce(p.ip, port, path)) return !exited && p.child === child;
      await new Promise((r) => setTimeout(r, PROBE_EVERY_MS));
    }
    return false;
  }
}

function probeOnce(host: string, port: number, path: string | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    if (path === undefined) {
      const s = connect({ host, port });
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
      return;
    }
    const req = request({ host, port, path, agent: false, timeout: 500 }, (res) => {
      res.resume();
      resolve((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300);
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(false));
    req.end();
  });
}

function now(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function signal(child: ChildProcess | undefined, sig: NodeJS.Signals): void {
  try {
    if (child?.pid !== undefined) process.kill(-child.pid, sig);
  } catch {
    // already gone
  }
}
