/**
 * @module
 * The slow path for plain HTTP on node:http: requests the raw HTTP/1.1 path (http1-connection.ts) hands
 * over with their connection (`Expect: 100-continue`, HTTP/1.0). Route by Host, find the session, forward
 * to its instance on a fresh connection with streamed bodies both ways, and count the request in flight
 * until the response ends. Bodies are relayed with explicit error listeners rather than `pipeline()` (an
 * AbortController per call on Node 20). Created by gateway.ts; WebSocket upgrades are in ws-proxy.ts.
 */
import { type ClientRequest, type IncomingMessage, request, type ServerResponse } from 'node:http';
import { TetherError } from '../../common/errors.ts';
import { clientAddress } from '../new-session-limit.ts';
import type { Router } from '../router.ts';
import type { Scheduler } from '../scheduler.ts';
import { newSessionCookie, newSessionForward, resolveSessionKey, type SessionKeyPolicy } from '../session-key.ts';
import type { ServiceState, SessionEntry } from '../state.ts';
import { type NewSessionForward, requestHeaders, responseHeaders, scanRequestHeaders } from './headers.ts';
import { hostFieldProblem, sendError, unknownHost } from './respond.ts';
import type { TrustedProxies } from './trusted-proxies.ts';

/** Options of `createHttpProxy`. */
export interface HttpProxyOptions {
  router: Router;
  scheduler: Scheduler;
  /** Session keys: signed-only services, `Secure` cookies. */
  keys: SessionKeyPolicy;
  /** Inactivity timeout of an upstream request (ms); 0 = none. */
  proxyTimeoutMs: number;
}

/** The session key of a request and, for a new session, what goes to the client and to the instance. */
export interface RequestKey {
  key: string;
  /** The `Set-Cookie` for the client (new session). */
  setCookie?: string;
  /** What the instance gets for a new session: its key as X-Session-Key (and the Cookie header to send). */
  newSession?: NewSessionForward;
}

/** The session key of a node:http request and, for a new one, its `Set-Cookie` and forwarded Cookie. */
export function resolveRequestKey(req: IncomingMessage, svc: ServiceState, keys: SessionKeyPolicy): RequestKey {
  const explicit = req.headers['x-session-key'];
  const h = req.headers;
  const cfg = svc.config;
  const { key, fresh } = resolveSessionKey(
    cfg,
    keys,
    h.cookie,
    typeof explicit === 'string' ? explicit : undefined,
    h.authorization,
  );
  if (!fresh) return { key };
  const proto = h['x-forwarded-proto'];
  return {
    key,
    setCookie: newSessionCookie(
      keys,
      cfg.cookieName,
      key,
      req.socket.remoteAddress,
      typeof proto === 'string' ? proto : proto?.join(', '),
    ),
    newSession: newSessionForward(cfg, h.cookie, key),
  };
}

/** The client address of a node:http request (X-Forwarded-For believed from a trusted proxy only). */
export function requestClient(req: IncomingMessage, trusted: TrustedProxies): string | undefined {
  const xff = req.headers['x-forwarded-for'];
  return clientAddress(trusted, req.socket.remoteAddress, Array.isArray(xff) ? xff.join(', ') : xff);
}

/** Creates the `request` listener of the slow-path node:http server. */
export function createHttpProxy(o: HttpProxyOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const { router, scheduler, proxyTimeoutMs, keys } = o;

  function forward(
    req: IncomingMessage,
    res: ServerResponse,
    svc: ServiceState,
    s: SessionEntry,
    rk: RequestKey,
    t0: number,
  ): void {
    const inst = s.instance;
    const hasBody =
      req.headers['transfer-encoding'] !== undefined ||
      (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
    let failed = false;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      scheduler.release(s);
      const m = svc.metrics;
      if (m) {
        m.byClass[(res.statusCode / 100) | 0]?.inc();
        m.duration.observe((performance.now() - t0) / 1000);
      }
    };
    const upstream = forwardRequest(req, inst, {
      upgrade: false,
      timeoutMs: proxyTimeoutMs,
      newSession: rk.newSession,
    });
    if (upstream === null) {
      sendError(res, unforwardable());
      release();
      return;
    }
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
      release();
    });
    upstream.once('response', (ures) => {
      res.writeHead(ures.statusCode ?? 502, responseHeaders(ures.rawHeaders, rk.setCookie));
      relay(ures, res);
    });
    upstream.once('timeout', () =>
      upstream.destroy(new TetherError('bad_gateway', `instance ${inst.name} did not answer in time`)),
    );
    upstream.on('error', (err) => {
      if (failed) return;
      failed = true;
      if (hasBody) {
        req.unpipe(upstream);
        req.resume(); // drain the rest of the upload so the 502 can still be read
      }
      if (res.headersSent) res.destroy();
      else sendError(res, err instanceof TetherError ? err : upstreamFailed(inst.name));
    });
    if (hasBody) {
      req.on('error', () => upstream.destroy()); // client abort: handled by res 'close' too
      req.pipe(upstream);
    } else upstream.end();
  }

  return function proxyRequest(req: IncomingMessage, res: ServerResponse): void {
    const bad = hostFieldProblem(scanRequestHeaders(req.rawHeaders).hosts, req.httpVersion === '1.1');
    if (bad !== null) {
      sendError(res, bad);
      return;
    }
    const svc = router.match(req.headers.host);
    if (svc === undefined) {
      sendError(res, unknownHost(req.headers.host, router.knownHosts));
      return;
    }
    const t0 = performance.now();
    const rk = resolveRequestKey(req, svc, keys);
    const key = rk.key;
    const s = scheduler.route(svc, key);
    if (s !== undefined) {
      forward(req, res, svc, s, rk, t0);
      return;
    }
    const gone = new AbortController();
    const onClose = () => gone.abort();
    res.once('close', onClose);
    scheduler.acquire(svc, key, gone.signal, requestClient(req, keys.trusted)).then(
      (placed) => {
        res.off('close', onClose);
        if (gone.signal.aborted) {
          scheduler.release(placed);
          return;
        }
        forward(req, res, svc, placed, rk, t0);
      },
      (err: unknown) => {
        res.off('close', onClose);
        if (!gone.signal.aborted) sendError(res, err);
      },
    );
  };
}

/**
 * Streams `from` into `res` with backpressure. Lighter than `pipeline()` on this hot path (no
 * AbortController per response); errors and early closes are handled by the caller's listeners.
 */
function relay(from: IncomingMessage, res: ServerResponse): void {
  const length = from.headers['content-length'];
  let left = length === undefined ? -1 : Number(length);
  from.on('data', (chunk: Buffer) => {
    if (left >= 0) {
      left -= chunk.length;
      if (left <= 0) {
        res.end(chunk); // last chunk: headers, body and end in one write
        return;
      }
    }
    if (!res.write(chunk)) from.pause();
  });
  res.on('drain', () => from.resume());
  from.once('end', () => {
    if (!res.writableEnded) res.end();
  });
  from.on('error', () => res.destroy());
}

/** How `forwardRequest` sends a request. */
export interface ForwardOptions {
  /** Forward `Connection: Upgrade` and `Upgrade` (WebSocket). */
  upgrade: boolean;
  /** Inactivity timeout (ms); 0 = none. */
  timeoutMs: number;
  /** What a new session's first request carries, or undefined. */
  newSession?: NewSessionForward;
}

/**
 * Opens the request to `inst` for a client request of the node:http path (a fresh socket: these
 * requests are rare, and no keep-alive socket is left to a paused instance).
 * @returns null when node:http refuses what it would have to send (e.g. characters it will not put in a path)
 */
export function forwardRequest(
  req: IncomingMessage,
  inst: { host: string; port: number },
  o: ForwardOptions,
): ClientRequest | null {
  const { timeoutMs } = o;
  try {
    return request({
      host: inst.host,
      port: inst.port,
      method: req.method,
      path: req.url,
      headers: requestHeaders(req, o.upgrade, o.newSession) as unknown as Record<string, string>,
      agent: false,
      timeout: timeoutMs > 0 ? timeoutMs : undefined,
    });
  } catch {
    return null;
  }
}

/** 400 for a request `forwardRequest` could not send. */
export function unforwardable(): TetherError {
  return new TetherError('invalid_request', 'the request cannot be forwarded as sent');
}

/** 502 for an instance that failed (died, refused, reset) during a request. */
export function upstreamFailed(instance: string): TetherError {
  return new TetherError('bad_gateway', `instance ${instance} failed while serving the request`);
}
