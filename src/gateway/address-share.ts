/**
 * @module
 * The per-address share of a service's live sessions (issue 22 item 1), so one client address can never hold
 * all of a service's instances while other addresses wait. share = max(1, floor(capacity × percent / 100)),
 * capacity = target × min(max-scale, --max-instances) (× --max-instances alone without max-scale), percent
 * = `--address-share` (50 by default; 100 = no share). An address may take free slots beyond its share (that
 * keeps nobody out), but once a new session of an address *under* its share has to wait, the address holding
 * the most sessions beyond its share gives one up — in flight or not (an open WebSocket is exactly what held the
 * service) — and waiters under their share are served before the others. Pure functions over the service
 * state; the scheduler acts on them.
 */
import type { ServiceState, SessionEntry } from './state.ts';

/**
 * The most live sessions of `svc` one address keeps while another address waits for it.
 * @param maxInstances the gateway's `--max-instances`
 * @param percent `--address-share`, 1-100; 100 = no share (Infinity)
 */
export function addressShare(svc: ServiceState, maxInstances: number, percent: number): number {
  if (percent >= 100) return Number.POSITIVE_INFINITY;
  const cfg = svc.config;
  const instances = cfg.maxScale === 0 ? maxInstances : Math.min(cfg.maxScale, maxInstances);
  return Math.max(1, Math.floor((instances * cfg.target * percent) / 100));
}

/** True when `client` (a known address) holds fewer than `share` live sessions of `svc`. */
export function underShare(svc: ServiceState, client: string | undefined, share: number): boolean {
  return client !== undefined && share !== Number.POSITIVE_INFINITY && (svc.clients.get(client) ?? 0) < share;
}

/**
 * The session that gives way to an address under its share: one of the address holding the most live
 * sessions of `svc`, when that is more than `share`; its idle sessions first, then the least recently active.
 * Only confirmed sessions on a running or paused instance (a binding still being made is left alone).
 */
export function overShareVictim(svc: ServiceState, share: number): SessionEntry | undefined {
  let top: string | undefined;
  let most = share;
  for (const [client, n] of svc.clients) {
    if (n > most) {
      top = client;
      most = n;
    }
  }
  if (top === undefined) return undefined;
  let victim: SessionEntry | undefined;
  for (const s of svc.sessions.values()) {
    if (s.client !== top || !s.live || !s.confirmed) continue;
    if (s.instance.state !== 'running' && s.instance.state !== 'paused') continue;
    if (victim === undefined || before(s, victim)) victim = s;
  }
  return victim;
}

/** Idle before busy, then least recently active. */
function before(a: SessionEntry, b: SessionEntry): boolean {
  if ((a.inflight === 0) !== (b.inflight === 0)) return a.inflight === 0;
  return a.lastActive < b.lastActive;
}

/** Index in `svc.queue` of the waiter to serve next: the first under its share, else the head (FIFO). */
export function nextWaiter(svc: ServiceState, share: number): number {
  if (share === Number.POSITIVE_INFINITY) return 0;
  const at = svc.queue.findIndex((w) => underShare(svc, w.client, share));
  return Math.max(at, 0);
}

/** Waiters in `svc.queue` under their share. */
export function waitersUnderShare(svc: ServiceState, share: number): number {
  let n = 0;
  for (const w of svc.queue) if (underShare(svc, w.client, share)) n++;
  return n;
}
