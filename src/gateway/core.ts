/**
 * @module
 * The gateway core without any server: service states, instance pool, session table, scheduler and the
 * reconcile pass, wired together over an `InstanceRuntime`, a `SessionStore` and a `Clock`.
 * gateway.ts puts HTTP servers around it; tests drive it directly with a fake runtime and a ManualClock.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../common/clock.ts';
import type { Logger } from '../common/log.ts';
import type { InstanceRuntime } from '../runtime/runtime.ts';
import { type ClaimNamer, claimNamer } from '../sessions/claim-name.ts';
import type { InstanceRecord, SessionStore } from '../sessions/session-store.ts';
import { ClusterDeadline } from './cluster-deadline.ts';
import { InstancePool } from './instance-pool.ts';
import { GatewayMetrics } from './metrics.ts';
import { NewSessionLimit } from './new-session-limit.ts';
import { reconcileService } from './reconciler.ts';
import { applyServices, type ReloadResult } from './reload.ts';
import { Scheduler } from './scheduler.ts';
import type { ServiceConfig } from './services/service-config.ts';
import { type SessionEvents, SessionTable } from './session-table.ts';
import { type InstanceEntry, newServiceState, type ServiceState } from './state.ts';

/** Options of `createGatewayCore`. */
export interface GatewayCoreOptions {
  services: readonly ServiceConfig[];
  domain: string;
  runtime: InstanceRuntime;
  store: SessionStore;
  clock: Clock;
  log: Logger;
  /** Max wait of a new session for a slot (ms). */
  queueTimeoutMs: number;
  /** Max waiting requests per service before 503 at once. @default 1000 */
  maxQueue?: number;
  /** Max time an instance may take to become ready (ms). */
  startTimeoutMs: number;
  /** Longest wait of one request for its instance to start or resume (ms); 503 + Retry-After past it. @default none */
  clusterWaitMs?: number;
  /** Max live instances of all services together, warm ones included. @default 32 */
  maxInstances?: number;
  /**
   * Names each session's agent/claim. @default keyed with a random secret: names change at each start
   * (the CLI always passes the deployment's secret)
   */
  claimName?: ClaimNamer;
  /** The regular reconcile interval the caller runs (ms); earlier deadlines get their own timer. @default 200 */
  tickMs?: number;
  /** This gateway's id in the session store. @default 'gateway' */
  gatewayId?: string;
  /** New sessions per client address per minute (0 = no limit). @default 0 */
  newSessionsPerMinute?: number;
  /** Percent of a service's capacity one client address keeps while others wait (address-share.ts). @default 50 */
  addressShare?: number;
  /** Binding listeners. */
  events?: SessionEvents;
}

/** The wired core. */
export interface GatewayCore {
  services: ServiceState[];
  metrics: GatewayMetrics;
  pool: InstancePool;
  table: SessionTable;
  scheduler: Scheduler;
  /** One reconcile pass over every service (level-based, idempotent). */
  reconcile(): void;
  /** Applies reloaded manifests (reload.ts); the caller rebuilds its router. */
  applyServices(next: readonly ServiceConfig[]): ReloadResult;
  /** Stops reconciling and rejects queued requests (before the runtime is closed). */
  stop(): void;
  /** Reconciling waits for this (the gateway reads its store first); true once set. */
  hydrated: boolean;
}

/** How often a durable store is read back for activity other gateways saw (ms). */
const REFRESH_MS = 2000;

/** Wires the gateway core. */
export function createGatewayCore(o: GatewayCoreOptions): GatewayCore {
  const services = o.services.map((c) => newServiceState(c, o.domain));
  const metrics = new GatewayMetrics(() => services);
  for (const svc of services) svc.metrics = metrics.forService(svc.config.name);
  let stopped = false;
  let pokeTimer: NodeJS.Immediate | undefined;
  let deadlineTimer: NodeJS.Timeout | undefined;
  let refreshedAt = 0;
  let refreshing = false;
  const gatewayId = o.gatewayId ?? 'gateway';
  const reconcile = () => {
    if (stopped || !core.hydrated) return;
    if (o.store.durable && !refreshing && Date.now() - refreshedAt >= REFRESH_MS) {
      refreshing = true;
      refreshedAt = Date.now();
      void refreshFromStore().finally(() => {
        refreshing = false;
      });
    }
    let next = Number.POSITIVE_INFINITY;
    for (const svc of services) {
      if (o.store.durable) scheduler.touchBusyForeign(svc);
      try {
        next = Math.min(next, reconcileService(svc, { pool, table, clock: o.clock, drain, room }));
      } catch (err) {
        o.log.error({ service: svc.config.name, err: (err as Error).message }, 'reconcile failed');
      }
    }
    // Run again right at the next idle/expiry deadline when it comes before the regular tick.
    if (deadlineTimer) clearTimeout(deadlineTimer);
    deadlineTimer = undefined;
    if (next < (o.tickMs ?? 200)) {
      deadlineTimer = setTimeout(reconcile, Math.max(1, Math.ceil(next)));
      deadlineTimer.unref();
    }
  };
  const drain = (svc: ServiceState) => scheduler.drain(svc);
  const room = () => pool.free() - services.reduce((n, s) => n + s.queue.length, 0);
  const poke = () => {
    pokeTimer ??= setImmediate(() => {
      pokeTimer = undefined;
      reconcile();
    });
  };
  const pool: InstancePool = new InstancePool({
    runtime: o.runtime,
    log: o.log,
    metrics,
    startTimeoutMs: o.startTimeoutMs,
    maxInstances: o.maxInstances,
    onGone: (inst) => {
      if (stopped) return;
      for (const s of [...inst.sessions]) table.end(s, 'instance_gone');
      scheduler.drain(inst.service);
      poke();
      if (!inst.foreign) write(o.store.deleteInstance(inst.service.config.name, inst.name));
    },
    onChange: (inst) => putInstance(inst),
  });
  const write = (p: Promise<unknown>) =>
    p.catch((err: unknown) => o.log.error({ err: (err as Error).message }, 'session store write failed'));
  const putInstance = (inst: InstanceEntry) => {
    if (inst.foreign || stopped || inst.state === 'starting' || inst.state === 'stopping') return;
    write(o.store.putInstance(instanceRecord(inst, gatewayId)));
  };
  /**
   * Activity another gateway proxied for sessions of this one (it writes lastActive to the store): move the
   * idle timers on, and resume a paused instance whose session was asked for elsewhere.
   */
  const refreshFromStore = async () => {
    for (const svc of services) {
      if (svc.sessions.size === 0) continue;
      const records = await o.store.list(svc.config.name).catch(() => []);
      for (const r of records) {
        const s = svc.sessions.get(r.id);
        if (s === undefined || !s.live || r.lastActive <= s.lastActive) continue;
        s.lastActive = r.lastActive;
        if (s.instance.state === 'paused') void pool.resume(s.instance);
      }
    }
  };
  const table = new SessionTable({
    store: o.store,
    pool,
    clock: o.clock,
    log: o.log,
    metrics,
    gatewayId,
    events: o.events,
    instanceChanged: putInstance,
    claimName: o.claimName ?? claimNamer(randomBytes(32)),
    onEnded: () => poke(),
  });
  const scheduler = new Scheduler({
    pool,
    table,
    store: o.store,
    clock: o.clock,
    metrics,
    queueTimeoutMs: o.queueTimeoutMs,
    maxQueue: o.maxQueue ?? 1000,
    poke,
    limit: new NewSessionLimit(o.clock, o.newSessionsPerMinute ?? 0),
    deadline:
      o.clusterWaitMs === undefined
        ? undefined
        : new ClusterDeadline({ ms: o.clusterWaitMs, runtime: o.runtime, log: o.log }),
    addressSharePercent: o.addressShare,
  });
  const core: GatewayCore = {
    services,
    metrics,
    pool,
    table,
    scheduler,
    reconcile,
    hydrated: true,
    applyServices(next) {
      const result = applyServices({ services, domain: o.domain, pool, table, scheduler, metrics, log: o.log }, next);
      poke();
      return result;
    },
    stop() {
      stopped = true;
      if (pokeTimer) clearImmediate(pokeTimer);
      if (deadlineTimer) clearTimeout(deadlineTimer);
      for (const svc of services) scheduler.rejectAll(svc);
    },
  };
  return core;
}

/** The store record of one of this gateway's instances. */
export function instanceRecord(inst: InstanceEntry, gateway: string): InstanceRecord {
  return {
    name: inst.name,
    service: inst.service.config.name,
    state: inst.state === 'paused' ? 'paused' : 'running',
    pid: inst.pid,
    incarnation: inst.incarnation,
    host: inst.host,
    port: inst.port,
    warm: inst.warm,
    gateway,
  };
}
