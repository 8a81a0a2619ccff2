/**
 * @module
 * The level-based, idempotent reconcile tick of each service: expire sessions, end (delete policy) or
 * pause (pause policy) idle ones, keep the warm pool and `min-scale` filled, remove unbound instances
 * beyond `min-scale` (scale to zero) and idle warm ones beyond `warm-pool`, and serve queued requests whose
 * slot freed. Reads time from the injected Clock; the gateway runs it on an interval and after changes. Never waits for instances: starts are fire-and-forget.
 */
import type { Clock } from '../common/clock.ts';
import type { InstancePool } from './instance-pool.ts';
import type { SessionTable } from './session-table.ts';
import { type InstanceEntry, type ServiceState, type SessionEntry, servingCount } from './state.ts';

/** Options of `reconcileService`. */
export interface ReconcileDeps {
  pool: InstancePool;
  table: SessionTable;
  clock: Clock;
  /** Serves queued requests whose slot is free now (Scheduler.drain). */
  drain: (svc: ServiceState) => void;
  /** Instances background starts may add now: free `max-instances` slots minus requests queued anywhere. */
  room: () => number;
}

/**
 * Brings one service to its desired state once. Safe to call at any time, any number of times.
 * @returns ms until the next deadline it knows of (an idle timeout or expiry), or Infinity
 */
export function reconcileService(svc: ServiceState, deps: ReconcileDeps): number {
  const now = deps.clock.now();
  const cfg = svc.config;
  let next = Number.POSITIVE_INFINITY;
  const idleSince = (s: SessionEntry) => (s.inflight > 0 ? 0 : now - s.lastActive);
  const timeout = cfg.sessionTimeoutMs;

  for (const s of [...svc.sessions.values()]) {
    if (s.expiresAt !== null && now >= s.expiresAt) {
      deps.table.end(s, 'expired');
      continue;
    }
    if (s.expiresAt !== null) next = Math.min(next, s.expiresAt - now);
    if (timeout > 0 && cfg.idlePolicy === 'delete') {
      const idle = idleSince(s);
      if (idle >= timeout) deps.table.end(s, 'idle');
      else if (s.inflight === 0) next = Math.min(next, timeout - idle);
    }
  }

  if (timeout > 0 && cfg.idlePolicy === 'pause') {
    for (const inst of svc.instances.values()) {
      if (inst.warm || inst.state !== 'running' || inst.sessions.size === 0 || inst.inflight > 0) continue;
      let least = Number.POSITIVE_INFINITY;
      for (const s of inst.sessions) least = Math.min(least, idleSince(s));
      if (least >= timeout) {
        void deps.pool.pause(inst);
        for (const s of inst.sessions) deps.table.sync(svc, s);
      } else next = Math.min(next, timeout - least);
    }
  }

  deps.drain(svc);
  fillAndTrim(svc, deps);
  for (const s of svc.sessions.values()) deps.table.sync(svc, s);
  return next;
}

function fillAndTrim(svc: ServiceState, deps: ReconcileDeps): void {
  const cfg = svc.config;
  const unbound: InstanceEntry[] = [];
  const pooled: InstanceEntry[] = [];
  let live = 0;
  for (const i of svc.instances.values()) {
    if (i.state === 'stopping') continue;
    if (i.warm) pooled.push(i);
    else {
      live++;
      if (i.sessions.size === 0) unbound.push(i);
    }
  }
  // Remove unbound instances beyond min-scale (left by a failed placement or a lowered min-scale).
  let excess = live - cfg.minScale;
  for (const i of unbound) {
    if (excess <= 0) break;
    if (i.state === 'starting' || i.inflight > 0 || svc.queue.length > 0) continue;
    void deps.pool.delete(i, 'scale down');
    excess--;
  }
  // Remove warm instances beyond a lowered warm-pool (a reload, or instances adopted from a bigger pool): they
  // hold max-instances slots and would keep the service from scaling to zero. A claimed one is no longer warm;
  // one whose claim the store refused is back in the pool without a session, so it may go too.
  let warm = pooled.length;
  for (const i of pooled) {
    if (warm <= cfg.warmPool) break;
    if (i.sessions.size > 0 || i.inflight > 0) continue;
    void deps.pool.delete(i, 'warm pool lowered');
    warm--;
  }
  if (Date.now() < svc.backoffUntil) return; // real time: a failing command must not spin
  // Queued sessions come first: they take freed max-instances slots before any warm refill.
  let global = deps.room();
  for (; warm < cfg.warmPool && global > 0; warm++, global--) deps.pool.start(svc, true);
  const room = cfg.maxScale === 0 ? Number.POSITIVE_INFINITY : cfg.maxScale - servingCount(svc);
  for (let n = Math.min(cfg.minScale - live, room, global); n > 0; n--) deps.pool.start(svc, false);
}
