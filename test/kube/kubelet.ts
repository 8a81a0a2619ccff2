/**
 * @module
 * The double's kubelet: each Pod runs as a local process (its first container's command and args) on a
 * loopback address of its own (127.A.B.C, the pod IP), so a proxy to "pod IP + container port" is a
 * real connection. Processes share one network namespace here, so the pod's address is passed as
 * `HOST` (what 0.0.0.0 means inside a real pod). Ready = the container port accepts a connection (or
 * the readiness probe's path answers 2xx). Used by `controller.ts`; every process is killed on `stopAll`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { connect } from 'node:net';
import type { WireObject } from './objects.ts';

interface Container {
  command?: string[];
  args?: string[];
  env?: { name: string; value?: string }[];
  workingDir?: string;
  ports?: { containerPort?: number }[];
  readinessProbe?: { httpGet?: { path?: string; port?: number } };
}

interface Running {
  /** `namespace/name` of the pod. */
  pod: string;
  /** Undefined until the start delay passed. */
  child: ChildProcess | undefined;
  ip: string;
  ready: boolean;
  done: boolean;
  stopping?: boolean;
  exited: Promise<void>;
}

const PROBE_EVERY_MS = 20;
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
    const spec = pod.spec as { containers?: Container[] } | undefined;
    const c = spec?.containers?.[0] ?? {};
    const argv = [...(c.command ?? []), ...(c.args ?? [])];
    const ip = allocatePodIp();
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' };
    for (const e of c.env ?? []) env[e.name] = e.value ?? '';
    env.HOST = ip;
    const running: Running = {
      pod: `${pod.metadata.namespace}/${pod.metadata.name}`,
      child: undefined,
      ip,
      ready: false,
      done: false,
      exited: Promise.resolve(),
    };
    this.#pods.set(pod.metadata.uid, running);
    const launch = () => {
      if (this.#pods.get(pod.metadata.uid) !== running || running.stopping || this.#stopped) return;
      const child = spawn(argv[0] ?? 'false', argv.slice(1), {
        cwd: c.workingDir ?? process.cwd(),
        env,
        detached: true,
        stdio: 'ignore',
      });
      child.on('error', () => {}); // a missing command exits the pod (below)
      running.child = child;
      running.exited = new Promise((resolve) => child.once('exit', () => resolve()));
      void running.exited.then(() => {
        running.done = true;
        if (this.#pods.get(pod.metadata.uid) === running) {
          running.ready = false;
          changed();
        }
      });
      const port = c.ports?.[0]?.containerPort ?? 8080;
      void this.#probe(running, port, c.readinessProbe?.httpGet?.path).then((ok) => {
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
    if (!p.child) {
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

  async #probe(p: Running, port: number, path: string | undefined): Promise<boolean> {
    let exited = false;
    void p.exited.then(() => {
      exited = true;
    });
    while (!exited && !this.#stopped) {
      if (await probeOnce(p.ip, port, path)) return !exited;
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

function signal(child: ChildProcess | undefined, sig: NodeJS.Signals): void {
  try {
    if (child?.pid !== undefined) process.kill(-child.pid, sig);
  } catch {
    // already gone
  }
}
