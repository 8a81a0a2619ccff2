/**
 * @module
 * The admin side of the gateway, bound to 127.0.0.1 only: `GET /` (its routes), `/_tether/services`,
 * `/_tether/sessions`, `/_tether/instances`, `/_tether/instances/{name}/logs`, `/metrics`, `/healthz`, and
 * `DELETE /_tether/sessions/{id}`, `DELETE /_tether/instances/{name}` (admin-actions.ts). Views of the gateway
 * state (admin-views.ts); never mounted on the public port. It answers only a loopback Host (a web page that
 * rebinds its own name to 127.0.0.1 sends its name as Host), and with `adminToken` only a bearer of the token
 * (`/healthz` and the console's files excepted: they hold no data). Created by gateway.ts.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import {
  CONSOLE_HEADERS,
  CONSOLE_PREFIX,
  type ConsoleAsset,
  consoleAsset,
  consoleConfigAsset,
} from '../common/console-assets.ts';
import { forbidden, invalidRequest, notFound, TetherError, unauthenticated } from '../common/errors.ts';
import type { Logger } from '../common/log.ts';
import type { InstanceRuntime } from '../runtime/runtime.ts';
import type { SessionStore } from '../sessions/session-store.ts';
import { deleteInstance, endSession, INSTANCE_NAME, SESSION_ID } from './admin-actions.ts';
import { describeInstance, describeService, describeSession } from './admin-views.ts';
import type { InstancePool } from './instance-pool.ts';
import type { GatewayMetrics } from './metrics.ts';
import { sendError } from './proxy/respond.ts';
import type { SessionTable } from './session-table.ts';
import type { ServiceState } from './state.ts';

/** Options of `createAdminHandler`. */
export interface AdminOptions {
  services: readonly ServiceState[];
  runtime: InstanceRuntime;
  store: SessionStore;
  metrics: GatewayMetrics;
  /** Ends sessions (DELETE /_tether/sessions/{id}). */
  table: SessionTable;
  /** Deletes instances (DELETE /_tether/instances/{name}). */
  pool: InstancePool;
  /** When set, every admin route needs `Authorization: Bearer <adminToken>` (else 401). @default undefined (none) */
  adminToken?: string;
  /** Where an unknown error is logged with the id its 500 names. */
  log: Logger;
}

const LOGS_PATH = /^\/_tether\/instances\/([a-z0-9-]+)\/logs$/;
const SESSION_PATH = /^\/_tether\/sessions\/([^/]+)$/;
const INSTANCE_PATH = /^\/_tether\/instances\/([^/]+)$/;

/** The admin routes, as `GET /` lists them. */
export const ADMIN_ROUTES: ReadonlyArray<{ path: string; what: string }> = Object.freeze([
  { path: '/', what: 'this list' },
  { path: '/_tether/services', what: 'services: host, annotations as read, instances, sessions, queue' },
  {
    path: '/_tether/sessions',
    what: 'sessions: key prefix, id, claim, instance, state, last activity, idle deadline, expiry, gateway (?reveal=keys: whole keys)',
  },
  {
    path: '/_tether/instances',
    what: 'instances: state, pid, sessions (key prefixes; ?reveal=keys: whole keys), warm, waiting_on (the cluster)',
  },
  { path: '/_tether/instances/{name}/logs', what: "an instance's last output lines (also of a failed start)" },
  {
    path: 'DELETE /_tether/sessions/{id}',
    what: 'ends a session as an idle delete would (?service=<name> when two services have the id)',
  },
  { path: 'DELETE /_tether/instances/{name}', what: 'deletes an instance and ends its sessions' },
  { path: '/console/', what: 'the web console (its files need no token; its calls carry it)' },
  { path: '/metrics', what: 'Prometheus metrics' },
  { path: '/healthz', what: 'liveness (needs no token: it holds no data)' },
]);

/** Creates the `request` listener of the admin server. */
export function createAdminHandler(o: AdminOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const routes: Record<string, (reveal: boolean) => Promise<unknown> | unknown> = {
    '/': () => ({ routes: ADMIN_ROUTES }),
    '/_tether/services': () => o.services.map(describeService),
    '/_tether/sessions': (reveal) => listSessions(o, reveal),
    '/_tether/instances': (reveal) =>
      o.services.flatMap((svc) =>
        [...svc.instances.values()].map((i) => describeInstance(i, reveal, o.runtime.waitingOn?.(i.name))),
      ),
  };
  const tokenDigest = o.adminToken ? digest(`Bearer ${o.adminToken}`) : undefined;
  return function admin(req: IncomingMessage, res: ServerResponse): void {
    if (!isLoopbackHost(req.headers.host)) {
      sendError(
        res,
        forbidden('the admin API answers only requests for a loopback host (localhost, 127.0.0.1, [::1])'),
      );
      return;
    }
    // The web console's files hold no data (its API calls carry the token), so they are served without one.
    const path = (req.url ?? '/').split('?')[0] as string;
    if (req.method === 'GET' && (path === '/console' || path.startsWith(CONSOLE_PREFIX))) {
      serveConsole(res, path);
      return;
    }
    // Liveness holds no data, and the Helm chart's probes ask it without the token.
    if ((req.method === 'GET' || req.method === 'HEAD') && path === '/healthz') {
      sendJson(res, { status: 'ok' });
      return;
    }
    if (tokenDigest && !timingSafeEqual(digest(req.headers.authorization ?? ''), tokenDigest)) {
      sendError(res, unauthenticated('the admin API needs Authorization: Bearer <admin token>'));
      return;
    }
    if (req.method === 'DELETE') {
      void remove(o, new URL(req.url ?? '/', 'http://admin'), res).catch((err: unknown) => sendError(res, err, o.log));
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendError(res, new TetherError('method_not_allowed', `method ${req.method} is not allowed here`));
      return;
    }
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://admin');
      const path = url.pathname;
      if (path === '/metrics') {
        const text = await o.metrics.registry.metrics();
        res.writeHead(200, { 'content-type': o.metrics.registry.contentType });
        res.end(text);
        return;
      }
      const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
      if (route) return sendJson(res, await route(revealKeys(url.searchParams)));
      const m = LOGS_PATH.exec(path);
      if (m) {
        const lines = o.runtime.logs(m[1] as string);
        if (!lines) throw notFound(`instance ${m[1]}`);
        return sendJson(res, lines);
      }
      throw notFound(`path ${path} (GET / lists the admin routes)`);
    })().catch((err: unknown) => sendError(res, err, o.log));
  };
}

/** `DELETE /_tether/sessions/{id}` and `DELETE /_tether/instances/{name}`. */
async function remove(o: AdminOptions, url: URL, res: ServerResponse): Promise<void> {
  const path = url.pathname;
  const session = SESSION_PATH.exec(path)?.[1];
  if (session !== undefined) {
    if (!SESSION_ID.test(session)) throw invalidRequest('id', 'a session id is 12 to 43 characters of [A-Za-z0-9_-]');
    const service = url.searchParams.get('service');
    return sendJson(res, await endSession(o, session, service));
  }
  const instance = INSTANCE_PATH.exec(path)?.[1];
  if (instance !== undefined) {
    if (!INSTANCE_NAME.test(instance)) throw invalidRequest('name', 'an instance name is [a-z0-9-], at most 63');
    return sendJson(res, await deleteInstance(o, instance));
  }
  throw new TetherError(
    'method_not_allowed',
    `DELETE is allowed on /_tether/sessions/{id} and /_tether/instances/{name} only`,
  );
}

function serveConsole(res: ServerResponse, path: string): void {
  if (path === '/console') {
    res.writeHead(302, { location: CONSOLE_PREFIX, 'content-length': 0 });
    res.end();
    return;
  }
  const asset: ConsoleAsset | undefined =
    path === '/console/config.json' ? consoleConfigAsset({ memory: null, gateway: '' }) : consoleAsset(path);
  if (!asset) {
    sendError(res, notFound(`path ${path}`));
    return;
  }
  res.writeHead(200, { ...CONSOLE_HEADERS, 'content-type': asset.type, 'content-length': asset.body.length });
  res.end(asset.body);
}

/**
 * True when a Host header names this machine's loopback: `localhost` (or a `*.localhost` name, which
 * never leaves the machine), an IPv4 address in 127.0.0.0/8, or `[::1]`; any port.
 */
export function isLoopbackHost(host: string | undefined): boolean {
  if (!host) return false;
  let name = host.toLowerCase();
  if (name.startsWith('[')) {
    const end = name.indexOf(']');
    if (end < 0) return false;
    const rest = name.slice(end + 1);
    if (rest !== '' && !/^:\d{1,5}$/.test(rest)) return false;
    const v6 = name.slice(1, end);
    return v6 === '::1' || v6 === '0:0:0:0:0:0:0:1' || /^::ffff:127\.\d+\.\d+\.\d+$/.test(v6);
  }
  const colon = name.indexOf(':');
  if (colon >= 0) {
    if (!/^\d{1,5}$/.test(name.slice(colon + 1))) return false;
    name = name.slice(0, colon);
  }
  if (name.endsWith('.')) name = name.slice(0, -1);
  if (name === 'localhost' || name.endsWith('.localhost')) return /^[a-z0-9.-]+$/.test(name);
  return isIP(name) === 4 && name.startsWith('127.');
}

/** `?reveal=keys` asks for whole session keys. @throws 400 naming `reveal` for any other value */
function revealKeys(query: URLSearchParams): boolean {
  const v = query.get('reveal');
  if (v === null) return false;
  if (v === 'keys') return true;
  throw invalidRequest('reveal', `the only value is 'keys', got '${v.slice(0, 40)}'`);
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

async function listSessions(o: AdminOptions, reveal: boolean) {
  const records = await o.store.list();
  const live = new Map(o.services.map((s) => [s.config.name, s]));
  return records.map((r) => {
    const svc = live.get(r.service);
    return describeSession(r, svc, svc?.sessions.get(r.id), reveal);
  });
}
