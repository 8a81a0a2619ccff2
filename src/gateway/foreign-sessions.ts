/**
 * @module
 * Sessions another gateway sharing a durable store bound (Redis mode): found on a local miss and
 * proxied to that gateway's instance, and their activity here written back to the store, so the
 * owner's idle timers see it (core.ts reads it back). Used by scheduler.ts.
 */
import { type TetherError, unavailable } from '../common/errors.ts';
import { type InstanceRecord, sessionId } from '../sessions/session-store.ts';
import type { SchedulerOptions } from './scheduler.ts';
import { FOREIGN_TTL_MS, type InstanceEntry, type ServiceState, type SessionEntry } from './state.ts';

/** True when a foreign entry still points at the instance `rec` describes (same process, same address). */
const sameInstance = (entry: InstanceEntry, rec: InstanceRecord): boolean =>
  entry.name === rec.name &&
  entry.incarnation === rec.incarnation &&
  entry.host === rec.host &&
  entry.port === rec.port;

/** What `ForeignSessions` uses of the scheduler's options. */
type ForeignOptions = Pick<SchedulerOptions, 'store' | 'clock' | 'pool' | 'table' | 'queueTimeoutMs'>;

/** Foreign sessions of one gateway. */
export class ForeignSessions {
  readonly #o: ForeignOptions;
  readonly #wentAway: () => TetherError;

  /** @param wentAway the error for a client that left while waiting (the scheduler's) */
  constructor(o: ForeignOptions, wentAway: () => TetherError) {
    this.#o = o;
    this.#wentAway = wentAway;
  }

  /**
   * A session another gateway sharing the store bound: proxied to its instance. Only durable stores are read
   * (in memory mode this gateway knows every session).
   * @throws {TetherError} 503 when its instance is not serving within the queue timeout, or Redis is down
   */
  async find(svc: ServiceState, key: string, signal: AbortSignal): Promise<SessionEntry | undefined> {
    const store = this.#o.store;
    const id = sessionId(key);
    const now = this.#o.clock.now();
    const cached = svc.foreign.get(id);
    if (cached && now - cached.checkedAt < FOREIGN_TTL_MS && cached.session.live) return cached.session;
    const rec = await store.get(svc.config.name, id);
    if (rec === undefined) {
      svc.foreign.delete(id);
      return undefined;
    }
    if (rec.gateway === this.#o.table.gatewayId) {
      // Ours but unknown here: left over from before a restart, or a bind that got no answer. Only the binding
      // read: it may have gone since (the undo of that bind) and another gateway may have bound the session,
      // which an unconditional end would take from under it (then bound again here: two instances).
      await store.end(svc.config.name, id, rec);
      return undefined;
    }
    const inst = await this.#foreignInstance(svc, rec.id, rec.instance, signal);
    const prev = cached?.session;
    if (prev?.live && prev.gateway === rec.gateway && sameInstance(prev.instance, inst)) {
      // Still bound there: keep the entry, whose open requests (a stream) keep telling the owner.
      prev.expiresAt = rec.expiresAt;
      prev.lastActive = Math.max(prev.lastActive, rec.lastActive);
      svc.foreign.set(id, { session: prev, checkedAt: now });
      return prev;
    }
    const session: SessionEntry = {
      id,
      key,
      claim: rec.claim,
      instance: this.#o.pool.foreign(svc, inst),
      createdAt: rec.createdAt,
      lastActive: rec.lastActive,
      expiresAt: rec.expiresAt,
      inflight: 0,
      live: true,
      synced: String(now),
      confirmed: true,
      bound: Promise.resolve(),
      gateway: rec.gateway,
      fromWarm: false,
      requests: 2,
      client: null,
      closers: null,
    };
    cached?.session.instance.upstream?.destroy();
    svc.foreign.set(id, { session, checkedAt: now });
    return session;
  }

  /**
   * The record of another gateway's instance once it serves: it may still be starting (its record comes when it
   * is ready) or paused (the newer activity written here makes its gateway resume it: core.ts, refresh).
   */
  async #foreignInstance(svc: ServiceState, id: string, name: string, signal: AbortSignal) {
    const store = this.#o.store;
    const deadline = Date.now() + this.#o.queueTimeoutMs;
    let woken = false;
    for (let delay = 10; ; delay = Math.min(delay * 2, 200)) {
      const inst = await store.getInstance(svc.config.name, name);
      if (inst?.state === 'running') return inst;
      if (inst?.state === 'paused' && !woken) {
        woken = true;
        await store.touch(svc.config.name, id, { lastActive: this.#o.clock.now() });
      }
      if (signal.aborted) throw this.#wentAway();
      if (Date.now() + delay > deadline) {
        throw unavailable(`instance ${name} of another gateway is not serving yet`, 1);
      }
      await new Promise((r) => setTimeout(r, delay));
    }
  }

  /**
   * Tells the owners of foreign sessions with requests open here (a stream, a WebSocket) that they are
   * still active: `release` writes activity only when a request ends, and the owner's idle timer sees
   * nothing else of it. Called on every reconcile pass; the store is written at most once a second.
   */
  touchBusy(svc: ServiceState): void {
    const now = this.#o.clock.now();
    for (const { session } of svc.foreign.values()) {
      if (session.inflight === 0 || !session.live) continue;
      session.lastActive = now;
      this.touch(session);
    }
  }

  /** Tells the owner of a foreign session about its activity here, at most once a second. */
  touch(s: SessionEntry): void {
    if (s.lastActive - Number(s.synced) < FOREIGN_TTL_MS) return;
    s.synced = String(s.lastActive);
    this.#o.store.touch(s.instance.service.config.name, s.id, { lastActive: s.lastActive }).catch(() => {});
  }
}
