/**
 * @module
 * Instance lifecycle for the gateway: start (cold or into the warm pool), pause, resume, delete,
 * and noticing instances that end. Owns the keep-alive connection pool (proxy/upstream-pool.ts) of each instance. Does not decide
 * which session goes where (scheduler.ts) nor when to pause or delete (reconciler.ts).
 */
import { request } from 'node:http';
import { randomAlphanumeric } from '../common/ids.ts';
import type { Logger } from '../common/log.ts';
import {
  type InstanceExit,
  type InstanceRuntime,
  type InstanceSession,
  type LogLine,
  type ObservedInstance,
  PROBE_HEADER,
} from '../runtime/runtime.ts';
import type { InstanceRecord } from '../sessions/session-store.ts';
import type { GatewayMetrics } from './metrics.ts';
import { UpstreamPool } from './proxy/upstream-pool.ts';
import type { InstanceEntry, ServiceState } from './state.ts';

/** First back-off of background starts after a crash (ms); doubles per crash in a row. */
const BACKOFF_BASE_MS = 2000;
/** Longest back-off (ms). */
const BACKOFF_MAX_MS = 60_000;
/** An unrequested death this soon after ready counts as a crash even for a bound instance (ms). */
const EARLY_DEATH_MS = 10_000;
/** Crashes in a row are forgotten after this long without one once the back-off ended (ms). */
const HEALTHY_MS = 30_000;

/** Options of `InstancePool`. */
export interface InstancePoolOptions {
  runtime: InstanceRuntime;
  log: Logger;
  metrics: GatewayMetrics;
  /** Max time an instance may take to become ready (ms). */
  startTimeoutMs: number;
  /** Max live instances of all services together, warm and stopping ones included. @default 32 */
  maxInstances?: number;
  /** Called once when an instance is gone (exited, failed to start): end its sessions, drain the queue. */
  onGone: (inst: InstanceEntry) => void;
  /** Called when an instance became ready, paused or resumed (its record in the session store is due). */
  onChange: (inst: InstanceEntry) => void;
}

/** Starts, pauses, resumes and deletes instances through an `InstanceRuntime`. */
export class InstancePool {
  readonly #o: InstancePoolOptions;
  readonly #byName = new Map<string, InstanceEntry>();

  /** Max live instances of all services together (warm and stopping ones included). */
  readonly maxInstances: number;

  constructor(options: InstancePoolOptions) {
    const max = options.maxInstances ?? 32;
    if (!Number.isInteger(max) || max < 1) {
      throw new Error(`Cannot start pool as 'maxInstances' must be an integer >= 1: got ${max}`);
    }
    this.maxInstances = max;
    this.#o = options;
    options.runtime.onExit((name, exit) => this.#exited(name, exit));
  }

  /** The live instance called `name`. */
  get(name: string): InstanceEntry | undefined {
    return this.#byName.get(name);
  }

  /** Every live instance this pool manages, of all services. */
  all(): IterableIterator<InstanceEntry> {
    return this.#byName.values();
  }

  /** Instances that may still be started under `maxInstances`. */
  free(): number {
    return this.maxInstances - this.#byName.size;
  }

  /**
   * At the `maxInstances` cap, deletes one paused warm-pool instance (of any service) so a waiting session
   * can start one, unless an instance is already on its way out (its slot frees soon).
   * @returns true when a slot is about to free
   */
  makeRoom(): boolean {
    let victim: InstanceEntry | undefined;
    for (const i of this.#byName.values()) {
      if (i.state === 'stopping') return true;
      if (victim === undefined && i.warm && i.state === 'paused' && i.inflight === 0) victim = i;
    }
    if (victim === undefined) return false;
    void this.delete(victim, 'make room (max-instances)');
    return true;
  }

  /**
   * Starts an instance of `svc` now; it is returned at once in state `starting`.
   * A warm instance is paused as soon as it is ready.
   */
  start(svc: ServiceState, warm: boolean, session?: InstanceSession): InstanceEntry {
    let name: string;
    do name = `${svc.config.name}-${randomAlphanumeric(5)}`;
    while (this.#byName.has(name));
    const inst = newEntry(svc, { name, state: 'starting', pid: null, host: '127.0.0.1', port: 0, warm });
    svc.instances.set(name, inst);
    this.#byName.set(name, inst);
    inst.ready = this.#boot(inst, session);
    inst.ready.catch(() => {}); // observed by waiters; failures are handled in #boot
    return inst;
  }

  /**
   * Manages an instance the runtime adopted (left running by a previous gateway), in the state observed.
   * @param warm true when the store had it in the warm pool
   */
  adopted(svc: ServiceState, found: ObservedInstance, warm: boolean): InstanceEntry {
    const inst = newEntry(svc, {
      name: found.name,
      state: found.state,
      pid: found.pid,
      host: found.host,
      port: found.port,
      warm,
      readyAt: Date.now(),
      incarnation: found.incarnation,
    });
    svc.instances.set(inst.name, inst);
    this.#byName.set(inst.name, inst);
    return inst;
  }

  /**
   * An instance another gateway manages, for proxying one of its sessions: not counted, never paused, resumed
   * or deleted from here.
   */
  foreign(svc: ServiceState, rec: InstanceRecord): InstanceEntry {
    return newEntry(svc, {
      name: rec.name,
      state: 'running',
      pid: rec.pid,
      host: rec.host,
      port: rec.port,
      warm: false,
      incarnation: rec.incarnation,
      foreign: true,
    });
  }

  /**
   * Pauses a running instance: `pausing` at once (no new request is routed to it), `paused` once the runtime
   * observed it. Its idle keep-alive sockets are dropped first: the app's keep-alive timers may fire the
   * moment it resumes, and a request written on such a socket would be reset.
   */
  pause(inst: InstanceEntry): Promise<void> {
    if (inst.state !== 'running') return inst.pausing ?? Promise.resolve();
    inst.state = 'pausing';
    if (inst.upstream) {
      inst.upstream.destroy();
      inst.upstream = new UpstreamPool(inst.host, inst.port);
    }
    inst.pausing = this.#o.runtime.pause(inst.name).then(
      () => {
        inst.pausing = null;
        if (inst.state !== 'pausing') return;
        inst.state = 'paused';
        this.#o.log.info({ instance: inst.name, warm: inst.warm }, 'instance paused');
        this.#o.onChange(inst);
      },
      (err: unknown) => {
        inst.pausing = null;
        this.#failed('pause', inst, err);
        if (inst.state === 'pausing') inst.state = 'running';
      },
    );
    return inst.pausing;
  }

  /** Resumes a paused (or pausing) instance; concurrent callers share one resume. */
  resume(inst: InstanceEntry): Promise<void> {
    if (inst.resuming) return inst.resuming;
    if (inst.state === 'pausing' && inst.pausing) {
      // Resume what is being paused once the pause is done (a half-done pause is not resumable everywhere).
      inst.resuming = inst.pausing.then(() => {
        inst.resuming = null;
        return this.resume(inst);
      });
      return inst.resuming;
    }
    if (inst.state !== 'paused') return Promise.resolve();
    inst.state = 'running';
    const t0 = performance.now();
    inst.resuming = this.#o.runtime
      .resume(inst.name)
      .then(
        (address) => {
          // A resumed Kubernetes sandbox runs in a new pod: a new address, and no old keep-alive socket is good.
          if (address && (address.host !== inst.host || address.port !== inst.port)) {
            inst.host = address.host;
            inst.port = address.port;
            inst.upstream?.destroy();
            inst.upstream = new UpstreamPool(inst.host, inst.port);
          }
        },
        (err: unknown) => {
          // Not resumed: it is still paused (observed), so the next request tries again.
          if (inst.state === 'running') inst.state = 'paused';
          throw err;
        },
      )
      .finally(() => {
        inst.resuming = null;
        this.#o.metrics.resumeDuration.observe({ service: inst.service.config.name }, (performance.now() - t0) / 1000);
        this.#o.onChange(inst);
      });
    return inst.resuming;
  }

  /** Deletes an instance (idempotent). Its sessions must already be ended by the caller. */
  delete(inst: InstanceEntry, reason: string): Promise<void> {
    if (inst.state === 'stopping') return Promise.resolve();
    const wasStarting = inst.state === 'starting';
    inst.state = 'stopping';
    this.#o.log.info({ instance: inst.name, reason }, 'deleting instance');
    // A starting instance may not be known to the runtime yet: #boot deletes it once started.
    if (wasStarting) {
      void this.#o.runtime.delete(inst.name).catch((err: unknown) => this.#failed('delete', inst, err));
      return inst.ready.catch(() => {});
    }
    return this.#o.runtime.delete(inst.name).catch((err: unknown) => this.#failed('delete', inst, err));
  }

  async #boot(inst: InstanceEntry, session: InstanceSession | undefined): Promise<void> {
    const cfg = inst.service.config;
    const t0 = performance.now();
    try {
      const started = await this.#o.runtime.start({
        name: inst.name,
        service: cfg.name,
        configuration: cfg.configuration,
        revision: cfg.revision,
        argv: cfg.container.argv,
        env: cfg.container.env,
        workingDir: cfg.container.workingDir,
        readinessPath: cfg.container.readinessPath,
        startTimeoutMs: this.#o.startTimeoutMs,
        ...(session ? { session } : {}),
        sandbox: cfg.container.sandbox,
      });
      inst.pid = started.pid;
      inst.incarnation = started.incarnation;
      inst.host = started.host;
      inst.port = started.port;
      inst.upstream = new UpstreamPool(inst.host, inst.port);
      this.#o.metrics.instanceStarts.inc({ service: cfg.name, warm: String(inst.warm) });
      this.#o.metrics.startDuration.observe({ service: cfg.name }, (performance.now() - t0) / 1000);
      if (inst.state === 'stopping') {
        await this.#o.runtime.delete(inst.name);
        throw new Error(`instance ${inst.name} was deleted while starting`);
      }
      if (inst.warm) await warmUp(inst, cfg.container.readinessPath ?? '/');
      // It may have exited after start resolved (e.g. on the warm-up request): #exited left it to us.
      if (inst.exited) throw new Error(`instance ${inst.name} exited while starting`);
      inst.state = 'running';
      inst.readyAt = Date.now();
      this.#o.onChange(inst);
      if (inst.warm) await this.pause(inst);
      this.#o.log.info({ instance: inst.name, pid: inst.pid, warm: inst.warm }, 'instance ready');
    } catch (err) {
      if (inst.state !== 'stopping') {
        // A real failure (not a delete while starting): back off background starts for a while.
        // The runtime's message says how it ended ("exited before it was ready (code 1)"); the cause
        // ("Cannot find module ...") is in the instance's own last lines.
        this.#o.log.warn(
          { instance: inst.name, err: (err as Error).message, stderr: outputTail(this.#o.runtime.logs(inst.name)) },
          'instance did not start',
        );
        this.#backOff(inst.service);
      }
      this.#gone(inst);
      throw err;
    }
  }

  #failed(what: string, inst: InstanceEntry, err: unknown): void {
    this.#o.log.error({ instance: inst.name, err: (err as Error).message }, `instance ${what} failed`);
  }

  #exited(name: string, exit: InstanceExit): void {
    const inst = this.#byName.get(name);
    if (!inst) return;
    inst.exited = true;
    if (!exit.requested) this.#o.log.warn({ instance: name, code: exit.code, signal: exit.signal }, 'instance died');
    // While starting, #boot sees the failure and calls #gone itself.
    if (inst.state === 'starting' || (inst.state === 'stopping' && inst.upstream === null)) return;
    // A warm or unbound instance dying on its own (nobody asked) would be refilled at once: a crash loop.
    const young = inst.readyAt > 0 && Date.now() - inst.readyAt < EARLY_DEATH_MS;
    if (!exit.requested && inst.state !== 'stopping' && (inst.warm || inst.sessions.size === 0 || young)) {
      this.#backOff(inst.service);
    }
    this.#gone(inst);
  }

  /** Holds background starts of `svc` back: 2 s, 4 s, 8 s … 60 s per crash in a row (real time). */
  #backOff(svc: ServiceState): void {
    const now = Date.now();
    if (now - svc.backoffUntil > HEALTHY_MS) svc.crashes = 0;
    svc.crashes++;
    const ms = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.min(svc.crashes - 1, 16));
    svc.backoffUntil = now + ms;
    this.#o.log.warn({ service: svc.config.name, crashes: svc.crashes, backoff_ms: ms }, 'backing off instance starts');
  }

  #gone(inst: InstanceEntry): void {
    if (this.#byName.get(inst.name) !== inst) return;
    this.#byName.delete(inst.name);
    inst.service.instances.delete(inst.name);
    inst.state = 'stopping';
    inst.upstream?.destroy();
    this.#o.onGone(inst);
  }
}

/** Lines of a failed start shown in the gateway's log. */
const TAIL_LINES = 10;
/** Longest line shown there (the whole line stays in the admin logs route). */
const TAIL_LINE_MAX = 300;

/**
 * The last stderr lines of an instance (its last lines of any stream when it wrote no stderr), each cut to
 * 300 characters: what the gateway logs when the instance failed to start.
 */
export function outputTail(lines: readonly LogLine[] | undefined): string[] {
  if (!lines) return [];
  const errs = lines.filter((l) => l.stream === 'stderr');
  return (errs.length > 0 ? errs : lines).slice(-TAIL_LINES).map((l) => l.line.slice(0, TAIL_LINE_MAX));
}

/**
 * Sends one request to a warm-pool instance before it is paused, so the app's first real request
 * does not pay its one-time start-up costs (lazy compilation, first accept). Result ignored; 2 s max.
 */
function warmUp(inst: InstanceEntry, path: string): Promise<void> {
  return new Promise((resolve) => {
    const req = request(
      { host: inst.host, port: inst.port, path, agent: false, timeout: 2000, headers: { [PROBE_HEADER]: 'warmup' } },
      (res) => {
        res.resume();
        res.once('end', resolve);
        res.once('error', () => resolve());
      },
    );
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve());
    req.end();
  });
}

/**
 * A new entry of `svc` with no session, no request in flight and nothing pending; `upstream` is made for
 * the address given (none while it is still starting, port 0).
 */
function newEntry(
  svc: ServiceState,
  e: Pick<InstanceEntry, 'name' | 'state' | 'pid' | 'host' | 'port' | 'warm'> &
    Partial<Pick<InstanceEntry, 'readyAt' | 'incarnation' | 'foreign'>>,
): InstanceEntry {
  return {
    service: svc,
    upstream: e.port === 0 ? null : new UpstreamPool(e.host, e.port),
    sessions: new Set(),
    inflight: 0,
    ready: Promise.resolve(),
    resuming: null,
    pausing: null,
    readyAt: 0,
    exited: false,
    incarnation: null,
    foreign: false,
    retired: false,
    ...e,
  };
}
