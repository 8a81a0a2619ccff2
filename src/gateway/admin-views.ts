/**
 * @module
 * What the admin API shows of services, sessions and instances. Session keys are bearer secrets, so a
 * list shows only a short prefix of each unless `?reveal=keys` asks for the whole keys. Sessions show
 * when they will idle out (delete or pause) and expire. Pure functions over the gateway state; used by
 * admin-server.ts.
 */
import { formatDuration } from '../common/durations.ts';
import type { ClusterWait } from '../runtime/runtime.ts';
import type { SessionRecord } from '../sessions/session-store.ts';
import { type InstanceEntry, type ServiceState, type SessionEntry, sessionState } from './state.ts';

/** Longest key prefix shown. */
const PREFIX_MAX = 8;

/**
 * A short prefix of a session key: at most 8 characters and at most half of the key, so a short
 * client-chosen key (`11`) is never shown whole; `…` marks the cut.
 */
export function keyPrefix(key: string): string {
  return `${key.slice(0, Math.min(PREFIX_MAX, Math.floor(key.length / 2)))}…`;
}

/**
 * A session key as a list shows it: the prefix, or the whole key with `reveal`. The store holds only a hash
 * of each key (`id`), so a session bound by another gateway, or not asked for since a restart, shows none.
 */
function showKey(key: string | null, reveal: boolean): { key?: string | null; key_prefix: string | null } {
  const prefix = key === null ? null : keyPrefix(key);
  return reveal ? { key, key_prefix: prefix } : { key_prefix: prefix };
}

/** One service as `/_tether/services` lists it. */
export function describeService(svc: ServiceState) {
  const c = svc.config;
  return {
    name: c.name,
    namespace: c.namespace,
    host: svc.host,
    session_affinity: c.affinity,
    cookie: c.cookieName,
    signed_session_keys: c.signedSessionKeys,
    add_session_cookie: c.addSessionCookie,
    session_timeout: formatDuration(c.sessionTimeoutMs),
    session_expiry: c.sessionExpiryMs === null ? null : formatDuration(c.sessionExpiryMs),
    idle_policy: c.idlePolicy,
    warm_pool: c.warmPool,
    target: c.target,
    min_scale: c.minScale,
    max_scale: c.maxScale,
    instances: svc.instances.size,
    sessions: svc.sessions.size,
    queued: svc.queue.length,
    source: `${c.source.file}#${c.source.document}`,
  };
}

/**
 * One session as `/_tether/sessions` lists it. `idle_deadline` is when the session's idle policy
 * (`on_idle`: delete ends the session, pause freezes its instance) acts if no request comes: null
 * while a request is in flight, when the service has no timeout, or once the instance is paused.
 * @param r the stored record; `s` the live entry (fresher: lastActive is flushed on the reconcile tick)
 */
export function describeSession(
  r: SessionRecord,
  svc: ServiceState | undefined,
  s: SessionEntry | undefined,
  reveal: boolean,
) {
  const lastActive = s?.lastActive ?? r.lastActive;
  const state = s ? sessionState(s) : r.state;
  const timeout = svc?.config.sessionTimeoutMs ?? 0;
  // A session of another gateway: the deadline it recorded.
  const idleAt = s === undefined ? r.idleAt : timeout > 0 ? lastActive + timeout : null;
  const idleDeadline = idleAt !== null && state === 'idle' ? new Date(idleAt).toISOString() : null;
  return {
    ...showKey(s?.key ?? null, reveal),
    id: r.id.slice(0, 12),
    service: r.service,
    claim: r.claim,
    instance: r.instance,
    state,
    created_at: new Date(r.createdAt).toISOString(),
    last_active: new Date(lastActive).toISOString(),
    on_idle: svc?.config.idlePolicy ?? null,
    idle_deadline: idleDeadline,
    expires_at: r.expiresAt === null ? null : new Date(r.expiresAt).toISOString(),
    gateway: r.gateway,
  };
}

/**
 * One instance as `/_tether/instances` lists it: `sessions` holds key prefixes, or whole keys with `reveal`;
 * `waiting_on` what its start, pause or resume waits for the cluster to do (null when nothing).
 */
export function describeInstance(i: InstanceEntry, reveal: boolean, wait?: ClusterWait) {
  return {
    name: i.name,
    service: i.service.config.name,
    state: i.state,
    pid: i.pid,
    ready_at: i.readyAt ? new Date(i.readyAt).toISOString() : null,
    sessions: [...i.sessions].map((s) => (s.key === null ? s.id.slice(0, 12) : reveal ? s.key : keyPrefix(s.key))),
    warm: i.warm,
    waiting_on: wait
      ? { what: wait.what, reason: wait.reason ?? null, hint: wait.hint, since: new Date(wait.since).toISOString() }
      : null,
  };
}
