/**
 * @module
 * The admin side of the gateway, bound to 127.0.0.1 only: `GET /_tether/services`, `/_tether/sessions`,
 * `/_tether/instances`, `/_tether/instances/{name}/logs`, `/metrics`, `/healthz`. Read-only views of
 * the gateway state; never mounted on the public port. `/_tether/sessions` lists raw session keys (each one
 * is the bearer of its session), hence loopback only and, with `adminToken`, a bearer token on every route.
 * Created by gateway.ts.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { formatDuration } from '../common/durations.ts';
import { notFound, TetherError, unauthenticated } from '../common/errors.ts';
import type { InstanceRuntime } from '../runtime/runtime.ts';
import type { SessionStore } from '../sessions/session-store.ts';
import type { GatewayMetrics } from './metrics.ts';
import { sendError } from './proxy/respond.ts';
import { type InstanceEntry, type ServiceState, sessionState } from './state.ts';

/** Options of `createAdminHandler`. */
export interface AdminOptions {
  services: readonly ServiceState[];
  runtime: InstanceRuntime;
  store: SessionStore;
  metrics: GatewayMetrics;
  /** When set, every admin route needs `Authorization: Bearer <adminToken>` (else 401). @default undefined (none) */
  adminToken?: string;
}

const LOGS_PATH = /^\/_tether\/instances\/([a-z0-9-]+)\/logs$/;

/** Creates the `request` listener of the admin server. */
export function createAdminHandler(o: AdminOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const routes: Record<string, () => Promise<unknown> | unknown> = {
    '/_tether/services': () => o.services.map(describeService),
    '/_tether/sessions': () => listSessions(o),
    '/_tether/instances': () => o.services.flatMap((svc) => [...svc.instances.values()].map(describeInstance)),
    '/healthz': () => ({ status: 'ok' }),
  };
  const tokenDigest = o.adminToken ? digest(`Bearer ${o.adminToken}`) : undefined;
  return function admin(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0] as string;
    if (tokenDigest && !timingSafeEqual(digest(req.headers.authorization ?? ''), tokenDigest)) {
      sendError(res, unauthenticated('the admin API needs Authorization: Bearer <admin token>'));
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendError(res, new TetherError('method_not_allowed', `method ${req.method} is not allowed here`));
      return;
    }
    void (async () => {
      if (path === '/metrics') {
        const text = await o.metrics.registry.metrics();
        res.writeHead(200, { 'content-type': o.metrics.registry.contentType });
        res.end(text);
        return;
      }
      const route = routes[path];
      if (route) return sendJson(res, await route());
      const m = LOGS_PATH.exec(path);
      if (m) {
        const lines = o.runtime.logs(m[1] as string);
        if (!lines) throw notFound(`instance ${m[1]}`);
        return sendJson(res, lines);
      }
      throw notFound(`path ${path}`);
    })().catch((err: unknown) => sendError(res, err));
  };
}

/** SHA-256 of a header value: equal lengths for a constant-time comparison. */
function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

function sendJson(res: ServerResponse, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function describeService(svc: ServiceState) {
  const c = svc.config;
  return {
    name: c.name,
    namespace: c.namespace,
    host: svc.host,
    session_affinity: c.affinity,
    cookie: c.cookieName,
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

async function listSessions(o: AdminOptions) {
  const records = await o.store.list();
  const live = new Map(o.services.map((s) => [s.config.name, s]));
  return records.map((r) => {
    // The in-memory entry is fresher than the store (lastActive is flushed on the reconcile tick).
    const svc = live.get(r.service);
    const s = svc?.sessions.get(r.id);
    const lastActive = s?.lastActive ?? r.lastActive;
    const timeout = svc?.config.sessionTimeoutMs ?? 0;
    const idleAt = s ? (timeout > 0 ? lastActive + timeout : null) : r.idleAt;
    return {
      // The store holds only a hash of the key: a session bound elsewhere, or not seen since a restart, has none.
      key: s?.key ?? null,
      id: r.id.slice(0, 12),
      service: r.service,
      instance: r.instance,
      state: s ? sessionState(s) : r.state,
      last_active: new Date(lastActive).toISOString(),
      idle_deadline: idleAt === null ? null : new Date(idleAt).toISOString(),
      expires_at: r.expiresAt === null ? null : new Date(r.expiresAt).toISOString(),
      gateway: r.gateway,
    };
  });
}

function describeInstance(i: InstanceEntry) {
  return {
    name: i.name,
    service: i.service.config.name,
    state: i.state,
    pid: i.pid,
    sessions: [...i.sessions].map((s) => s.key ?? s.id.slice(0, 12)),
    warm: i.warm,
  };
}
