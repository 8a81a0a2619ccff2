/**
 * @module
 * The gateway's in-memory state: per service, its instances, its sessions and its FIFO queue.
 * Plain data plus small pure helpers; the scheduler, instance pool and reconciler mutate it,
 * always synchronously around placement decisions so no two requests take the same slot.
 */
import type { TetherError } from '../common/errors.ts';
import type { SessionState } from '../sessions/session-store.ts';
import type { ServiceRequestMetrics } from './metrics.ts';
import type { UpstreamPool } from './proxy/upstream-pool.ts';
import type { ServiceConfig } from './services/service-config.ts';

/**
 * Lifecycle of an instance as the admin API shows it. `pausing` lasts until the runtime observed the pause
 * (instant locally, seconds on Kubernetes); only then is it `paused`.
 */
export type InstanceState = 'starting' | 'running' | 'pausing' | 'paused' | 'stopping';

/** One instance of a service. */
export interface InstanceEntry {
  name: string;
  service: ServiceState;
  state: InstanceState;
  pid: number | null;
  host: string;
  port: number;
  /** Keep-alive connections to this instance; null until it is ready. */
  upstream: UpstreamPool | null;
  /** Sessions bound to it (at most `target`). */
  sessions: Set<SessionEntry>;
  /** True while it sits in the warm pool (unbound, paused). */
  warm: boolean;
  /** Requests (and upgraded connections) in flight. */
  inflight: number;
  /** Settles when start finishes: resolves once ready, rejects when it never became ready. */
  ready: Promise<void>;
  /** Pending resume, awaited by concurrent requests. */
  resuming: Promise<void> | null;
  /** Pending pause (state `pausing`), awaited by a resume. */
  pausing: Promise<void> | null;
  /** Epoch ms (real time) it became ready; 0 until then. */
  readyAt: number;
  /** True once the runtime reported its exit (it may still be `starting` then: #boot re-checks it). */
  exited: boolean;
  /** The runtime's incarnation (process start time, pod uid) once started; kept in the session store. */
  incarnation: string | null;
  /** True for an instance another gateway manages (a session it bound, proxied here): never paused or deleted. */
  foreign: boolean;
  /** Started from a container spec a reload replaced: it serves its sessions to their end, takes no new one. */
  retired: boolean;
}

/** One session bound to one instance. */
export interface SessionEntry {
  /** `sessionId(key)`: what the store keeps. */
  id: string;
  /** The raw key, once a request carried it (null for a session rehydrated from the store until then). */
  key: string | null;
  claim: string;
  instance: InstanceEntry;
  createdAt: number;
  lastActive: number;
  expiresAt: number | null;
  inflight: number;
  /** False once ended; late releases then do nothing. */
  live: boolean;
  /** `state:lastActive` last written to the store, to skip unchanged writes. */
  synced: string;
  /** True once the store confirmed the binding (`bind`); the fast path routes only confirmed sessions. */
  confirmed: boolean;
  /** Settles when the store answered the bind: rejects when the binding was not made here. */
  bound: Promise<void>;
  /** Id of the gateway that bound it. */
  gateway: string;
  /** For a session placed on a warm-pool instance: it goes back to the pool when the bind is refused. */
  fromWarm: boolean;
  /** Requests it sent (2 for a rehydrated one: it had a past); a one-request session is reclaimed first. */
  requests: number;
  /**
   * The client address that started it (address-share.ts counts live sessions per address); null when unknown
   * (taken back from the store after a restart, another gateway's, or placed without an address).
   */
  client: string | null;
  /** Closes the upgraded connections (WebSockets) it has open; called when it ends. Null when there are none. */
  closers: Set<() => void> | null;
}

/** A request waiting in the FIFO queue for a slot. */
export interface Waiter {
  key: string;
  /** The client address of the new session (address-share.ts serves addresses under their share first). */
  client: string | undefined;
  resolve: (s: SessionEntry) => void;
  reject: (err: TetherError) => void;
}

/** The queued placement of one new session key, shared by all its waiting requests. */
export interface Placement {
  /** Settles when the session is placed, or on queue timeout, shutdown or `cancel`. */
  promise: Promise<SessionEntry>;
  /** Requests still waiting on it; the last one to go away cancels it. */
  interested: number;
  /** Leaves the queue and rejects `promise`. */
  cancel: () => void;
}

/** Everything the gateway knows about one service. */
export interface ServiceState {
  config: ServiceConfig;
  /** `<name>.<namespace>.<domain>`. */
  host: string;
  instances: Map<string, InstanceEntry>;
  /** This gateway's sessions by id (`sessionId(key)`), the unconfirmed ones included. */
  sessions: Map<string, SessionEntry>;
  /** Live sessions of `sessions` per client address (those with one), kept by the session table. */
  clients: Map<string, number>;
  /** The same sessions by raw key, once known: the request fast path is one Map get, no hashing. */
  byKey: Map<string, SessionEntry>;
  /** Sessions another gateway bound, proxied to its instances; looked up again after `FOREIGN_TTL_MS`. */
  foreign: Map<string, { session: SessionEntry; checkedAt: number }>;
  /** New sessions waiting for a slot, so concurrent first requests of one key share one queue entry. */
  placing: Map<string, Placement>;
  queue: Waiter[];
  /** Epoch ms (real time) before which no background (warm/min-scale) start is tried, after a crash. */
  backoffUntil: number;
  /** Crashes in a row (failed starts, unrequested deaths of unbound or young instances): the back-off exponent. */
  crashes: number;
  /** Pre-bound request metrics (set by the gateway). */
  metrics: ServiceRequestMetrics | null;
}

/** Creates the empty state of a service. */
export function newServiceState(config: ServiceConfig, domain: string): ServiceState {
  return {
    config,
    host: `${config.name}.${config.namespace}.${domain}`.toLowerCase(),
    instances: new Map(),
    sessions: new Map(),
    clients: new Map(),
    byKey: new Map(),
    foreign: new Map(),
    placing: new Map(),
    queue: [],
    backoffUntil: 0,
    crashes: 0,
    metrics: null,
  };
}

/** Instances counted against `max-scale`: every non-warm one, including those stopping. */
export function servingCount(svc: ServiceState): number {
  let n = 0;
  for (const i of svc.instances.values()) if (!i.warm) n++;
  return n;
}

/** How long a foreign session's binding is trusted before it is read from the store again (ms). */
export const FOREIGN_TTL_MS = 1000;

/** The state shown for a session. */
export function sessionState(s: SessionEntry): SessionState {
  if (s.inflight > 0) return 'active';
  return s.instance.state === 'paused' ? 'paused' : 'idle';
}
