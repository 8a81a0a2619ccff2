/**
 * @module
 * Binds and ends sessions in the gateway's memory and writes each change through to the
 * `SessionStore` (memory now, Redis later). Ending a session deletes its instance once the
 * instance serves no session any more (sandboxes are never handed to another session).
 * Called by the scheduler, the reconciler and the instance-gone hook.
 */
import type { Clock } from '../common/clock.ts';
import type { Logger } from '../common/log.ts';
import type { ClaimNamer } from '../sessions/claim-name.ts';
import type { SessionRecord, SessionStore } from '../sessions/session-store.ts';
import type { InstancePool } from './instance-pool.ts';
import type { GatewayMetrics } from './metrics.ts';
import { type InstanceEntry, type ServiceState, type SessionEntry, sessionState } from './state.ts';

/** Why a session ended (a metric label). */
export type EndReason = 'idle' | 'expired' | 'instance_gone' | 'shutdown' | 'service_removed';

/** Options of `SessionTable`. */
export interface SessionTableOptions {
  store: SessionStore;
  pool: InstancePool;
  clock: Clock;
  log: Logger;
  metrics: GatewayMetrics;
  /** Names a session's agent/claim (claim-name.ts: keyed with the deployment's secret). */
  claimName: ClaimNamer;
  /** Called after a session ended (a slot may be free: reconcile and drain the queue soon). */
  onEnded: () => void;
}

/** Session bindings, in memory and written through to the store. */
export class SessionTable {
  readonly #o: SessionTableOptions;

  constructor(options: SessionTableOptions) {
    this.#o = options;
  }

  /** Binds a new session `key` to `inst` (synchronously) and records it. */
  bind(svc: ServiceState, inst: InstanceEntry, key: string): SessionEntry {
    const now = this.#o.clock.now();
    const exp = svc.config.sessionExpiryMs;
    const s: SessionEntry = {
      key,
      claim: this.#o.claimName(svc.config.name, key),
      instance: inst,
      createdAt: now,
      lastActive: now,
      expiresAt: exp === null ? null : now + exp,
      inflight: 0,
      live: true,
      synced: '',
    };
    svc.sessions.set(key, s);
    inst.sessions.add(s);
    this.#o.log.info({ service: svc.config.name, claim: s.claim, instance: inst.name }, 'session bound');
    this.#write(this.#o.store.put(toRecord(svc, s)));
    return s;
  }

  /** Ends a session; deletes its instance when no other session uses it. Idempotent. */
  end(s: SessionEntry, reason: EndReason): void {
    if (!s.live) return;
    s.live = false;
    const inst = s.instance;
    const svc = inst.service;
    if (svc.sessions.get(s.key) === s) svc.sessions.delete(s.key);
    inst.sessions.delete(s);
    this.#o.metrics.sessionsEnded.inc({ service: svc.config.name, reason });
    this.#o.log.info({ service: svc.config.name, claim: s.claim, instance: inst.name, reason }, 'session ended');
    this.#write(this.#o.store.delete(svc.config.name, s.key));
    if (inst.sessions.size === 0 && !inst.warm) void this.#o.pool.delete(inst, `session ${reason}`);
    this.#o.onEnded();
  }

  /** Writes the current state and lastActive of a session to the store (level-based; from the reconciler). */
  sync(svc: ServiceState, s: SessionEntry): void {
    const state = sessionState(s);
    const sig = `${state}:${s.lastActive}`;
    if (!s.live || sig === s.synced) return;
    s.synced = sig;
    this.#write(this.#o.store.update(svc.config.name, s.key, { state, lastActive: s.lastActive }));
  }

  #write(p: Promise<unknown>): void {
    p.catch((err: unknown) => this.#o.log.error({ err: (err as Error).message }, 'session store write failed'));
  }
}

/** The store record of a session. */
export function toRecord(svc: ServiceState, s: SessionEntry): SessionRecord {
  return {
    key: s.key,
    service: svc.config.name,
    instance: s.instance.name,
    claim: s.claim,
    state: sessionState(s),
    createdAt: s.createdAt,
    lastActive: s.lastActive,
    expiresAt: s.expiresAt,
  };
}
