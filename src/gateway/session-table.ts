/**
 * @module
 * Binds and ends sessions. A placement is reserved in the gateway's memory at once (so no two requests here take
 * one slot) and becomes a binding only when the `SessionStore` confirms it (`bind`, atomic across gateways);
 * a refused one is undone. Ends and state changes are written to the store and awaited in the background (the
 * Redis store queues them in order while Redis is down). Ending a session deletes its instance once it serves no
 * session any more (sandboxes are never handed to another session). Emits explicit bound / ended events.
 * Called by the scheduler, the reconciler, the rehydration and the instance-gone hook.
 */
import type { Clock } from '../common/clock.ts';
import { isTetherError, unavailable } from '../common/errors.ts';
import type { Logger } from '../common/log.ts';
import type { ClaimNamer } from '../sessions/claim-name.ts';
import { type SessionRecord, type SessionStore, sessionId } from '../sessions/session-store.ts';
import type { InstancePool } from './instance-pool.ts';
import type { GatewayMetrics } from './metrics.ts';
import { type InstanceEntry, type ServiceState, type SessionEntry, sessionState } from './state.ts';

/** Why a session ended (a metric label). */
export type EndReason =
  | 'idle'
  | 'expired'
  | 'instance_gone'
  | 'shutdown'
  | 'reclaimed'
  /** Its address held more than its share of the service while another address waited (address-share.ts). */
  | 'over_share'
  | 'service_removed'
  /** Ended on demand through the admin API (admin-actions.ts). */
  | 'admin';

/** Listeners of binding changes (e.g. `tether up` gives the instance's sandbox to the session's claim). */
export interface SessionEvents {
  /** A binding was confirmed by the store (also for each session rehydrated at start). */
  bound?(record: SessionRecord): void;
  /** A session of this gateway ended. */
  ended?(record: SessionRecord, reason: EndReason): void;
}

/** Options of `SessionTable`. */
export interface SessionTableOptions {
  store: SessionStore;
  pool: InstancePool;
  clock: Clock;
  log: Logger;
  metrics: GatewayMetrics;
  /** This gateway's id, written on each binding. */
  gatewayId: string;
  events?: SessionEvents;
  /** Called when an instance's record changed (a warm one was claimed). */
  instanceChanged: (inst: InstanceEntry) => void;
  /** Names a session's agent/claim (claim-name.ts: keyed with the deployment's secret). */
  claimName: ClaimNamer;
  /** Called after a session ended (a slot may be free: reconcile and drain the queue soon). */
  onEnded: () => void;
}

/** Options of `SessionTable.bind`. */
export interface BindOptions {
  /** The instance was just taken from the warm pool (it goes back there if refused). @default false */
  fromWarm?: boolean;
  /** The client address that starts the session (counted per address in `ServiceState.clients`). */
  client?: string;
}

/** Thrown (as `bound` rejection) when the store kept another binding: place again. */
export class BindRefused extends Error {
  constructor(readonly outcome: 'exists' | 'full') {
    super(`binding refused by the session store (${outcome})`);
  }
}

/** Session bindings, reserved in memory and made in the store. */
export class SessionTable {
  readonly #o: SessionTableOptions;

  constructor(options: SessionTableOptions) {
    this.#o = options;
  }

  /** This gateway's id. */
  get gatewayId(): string {
    return this.#o.gatewayId;
  }

  /** The claim/agent name a session of `key` has in `svc`. */
  claimOf(svc: ServiceState, key: string): string {
    return this.#o.claimName(svc.config.name, key);
  }

  /** When a session bound now would expire (epoch ms), or null. */
  expiryOf(svc: ServiceState): number | null {
    const exp = svc.config.sessionExpiryMs;
    return exp === null ? null : this.#o.clock.now() + exp;
  }

  /**
   * Reserves `inst` for the new session `key` (synchronously) and asks the store to bind it; `entry.bound`
   * settles with the store's answer (rejects with `BindRefused` or 503 when the binding was not made here).
   */
  bind(svc: ServiceState, inst: InstanceEntry, key: string, o: BindOptions = {}): SessionEntry {
    const fromWarm = o.fromWarm ?? false;
    const now = this.#o.clock.now();
    const s: SessionEntry = {
      id: sessionId(key),
      key,
      claim: this.claimOf(svc, key),
      instance: inst,
      createdAt: now,
      lastActive: now,
      expiresAt: this.expiryOf(svc),
      inflight: 0,
      live: true,
      synced: '',
      confirmed: false,
      bound: Promise.resolve(),
      gateway: this.#o.gatewayId,
      fromWarm,
      requests: 0,
      client: o.client ?? null,
      closers: null,
    };
    this.#add(svc, s);
    const record = toRecord(svc, s);
    s.bound = this.#o.store.bind(record, svc.config.target).then(
      (r) => {
        if (r.outcome !== 'bound') {
          this.#undo(svc, s);
          throw new BindRefused(r.outcome);
        }
        if (!s.live) {
          // Ended (its instance went away) while the bind ran: end it in the store too; acquire sees why.
          this.#background(this.#o.store.end(svc.config.name, s.id));
          return;
        }
        s.confirmed = true;
        s.synced = `${record.state}:${record.lastActive}`;
        if (fromWarm) this.#o.instanceChanged(inst);
        this.#o.log.info({ service: svc.config.name, claim: s.claim, instance: inst.name }, 'session bound');
        this.#o.events?.bound?.(record);
      },
      (err: unknown) => {
        this.#undo(svc, s);
        this.#o.log.warn({ service: svc.config.name, err: (err as Error).message }, 'session not bound');
        throw isTetherError(err) ? err : unavailable('the session store failed', 1);
      },
    );
    s.bound.catch(() => {}); // observed by acquire
    return s;
  }

  /** Takes back a session the store kept for this gateway, on an adopted instance (start-up rehydration). */
  restore(svc: ServiceState, inst: InstanceEntry, r: SessionRecord): SessionEntry {
    const s: SessionEntry = {
      id: r.id,
      key: null,
      claim: r.claim,
      instance: inst,
      createdAt: r.createdAt,
      lastActive: r.lastActive,
      expiresAt: r.expiresAt,
      inflight: 0,
      live: true,
      synced: `${r.state}:${r.lastActive}`,
      confirmed: true,
      bound: Promise.resolve(),
      gateway: r.gateway,
      fromWarm: false,
      requests: 2,
      client: null,
      closers: null,
    };
    this.#add(svc, s);
    this.#o.events?.bound?.(r);
    return s;
  }

  /** A request carried the raw key of a session known by id only (rehydrated): index it by key too. */
  learnKey(svc: ServiceState, s: SessionEntry, key: string): void {
    s.key = key;
    svc.byKey.set(key, s);
  }

  /**
   * Ends a session; deletes its instance when no other session uses it, and closes its open WebSockets (an
   * instance shared with other sessions would keep serving them). Idempotent.
   */
  end(s: SessionEntry, reason: EndReason): void {
    if (!s.live) return;
    s.live = false;
    const inst = s.instance;
    const svc = inst.service;
    this.#remove(svc, s);
    if (s.closers !== null) for (const close of [...s.closers]) close();
    if (!s.confirmed) return; // its bind is still running: it ends the store record when it returns
    this.#o.metrics.sessionsEnded.inc({ service: svc.config.name, reason });
    this.#o.log.info({ service: svc.config.name, claim: s.claim, instance: inst.name, reason }, 'session ended');
    this.#background(this.#o.store.end(svc.config.name, s.id));
    this.#o.events?.ended?.(toRecord(svc, s), reason);
    if (inst.sessions.size === 0 && !inst.warm) void this.#o.pool.delete(inst, `session ${reason}`);
    this.#o.onEnded();
  }

  /** Writes state, lastActive and the idle deadline of a session to the store (level-based; from the reconciler). */
  sync(svc: ServiceState, s: SessionEntry): void {
    const state = sessionState(s);
    const sig = `${state}:${s.lastActive}`;
    if (!s.live || !s.confirmed || sig === s.synced) return;
    s.synced = sig;
    this.#background(
      this.#o.store.touch(svc.config.name, s.id, { state, lastActive: s.lastActive, idleAt: idleAt(svc, s) }),
    );
  }

  #add(svc: ServiceState, s: SessionEntry): void {
    svc.sessions.set(s.id, s);
    if (s.key !== null) svc.byKey.set(s.key, s);
    s.instance.sessions.add(s);
    if (s.client !== null) svc.clients.set(s.client, (svc.clients.get(s.client) ?? 0) + 1);
  }

  #remove(svc: ServiceState, s: SessionEntry): void {
    if (svc.sessions.get(s.id) === s) svc.sessions.delete(s.id);
    if (s.key !== null && svc.byKey.get(s.key) === s) svc.byKey.delete(s.key);
    s.instance.sessions.delete(s);
    if (s.client !== null) {
      const n = (svc.clients.get(s.client) ?? 1) - 1;
      if (n > 0) svc.clients.set(s.client, n);
      else svc.clients.delete(s.client);
    }
  }

  /** Takes back a reservation the store refused: the instance is free again (a warm one back in the pool). */
  #undo(svc: ServiceState, s: SessionEntry): void {
    if (!s.live) return;
    s.live = false;
    this.#remove(svc, s);
    const inst = s.instance;
    if (s.fromWarm && inst.sessions.size === 0 && inst.state === 'paused') inst.warm = true;
    this.#o.onEnded();
  }

  #background(p: Promise<unknown>): void {
    p.catch((err: unknown) => this.#o.log.error({ err: (err as Error).message }, 'session store write failed'));
  }
}

/** The idle deadline of a session (ms), or null without `session-timeout`. */
export function idleAt(svc: ServiceState, s: SessionEntry): number | null {
  const t = svc.config.sessionTimeoutMs;
  return t > 0 ? s.lastActive + t : null;
}

/** The store record of a session. */
export function toRecord(svc: ServiceState, s: SessionEntry): SessionRecord {
  return {
    id: s.id,
    service: svc.config.name,
    instance: s.instance.name,
    claim: s.claim,
    state: sessionState(s),
    createdAt: s.createdAt,
    lastActive: s.lastActive,
    idleAt: idleAt(svc, s),
    expiresAt: s.expiresAt,
    gateway: s.gateway,
  };
}
