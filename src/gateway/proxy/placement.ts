/**
 * @module
 * The proxy's request prelude, one step for its three paths (exchange.ts: raw HTTP/1.1; http-proxy.ts:
 * node:http; ws-proxy.ts: upgrades): the Host field, the service, the session key (and a new session's
 * cookie), then the place: the running session at once, or a wait in the scheduler that the client leaving
 * aborts. Also the one request meter (status class, duration) when the slot is released. A path extends
 * `Placement` with what it does once placed or refused; the raw path passes itself as the request, so its
 * fast path makes no closure and no object here.
 */
import type { EventEmitter } from 'node:events';
import { clientAddress } from '../new-session-limit.ts';
import type { Router } from '../router.ts';
import type { Scheduler } from '../scheduler.ts';
import { newSessionCookie, newSessionForward, resolveSessionKey, type SessionKeyPolicy } from '../session-key.ts';
import type { ServiceState, SessionEntry } from '../state.ts';
import type { NewSessionForward, RequestHeaderScan } from './headers.ts';
import { hostFieldProblem, unknownHost } from './respond.ts';

/** What placing a request needs of the gateway. */
export interface PlacementContext {
  router: Router;
  scheduler: Scheduler;
  /** Session keys: signed-only services, `Secure` cookies, trusted proxies. */
  keys: SessionKeyPolicy;
}

/** The request a path places: its headers as scanned, its HTTP version and the client socket's address. */
export interface PlacedRequest {
  /** What `scanRequestHeaders` read of the request (Host lines, Cookie, X-Session-Key, Authorization, X-Forwarded-*). */
  scan: RequestHeaderScan;
  /** HTTP/1.1 (a request without Host is refused); HTTP/1.0 may omit it. */
  http11: boolean;
  /** The client socket's remote address. */
  peer: string | undefined;
}

/**
 * One request's place: its service, session key and, once placed, the session slot it holds (one request in
 * flight) until `release`. `place` calls `placed` or `refused` exactly once, unless the client left first
 * (`leave`): then a slot that comes too late is given back and a refusal is not answered.
 */
export abstract class Placement {
  /** The service the Host names (set by `place` unless refused for the Host). */
  protected svc: ServiceState | null = null;
  /** The session slot held from `placed` until `release`. */
  protected session: SessionEntry | null = null;
  /** For a new session: the `Set-Cookie` for the client. */
  protected setCookie: string | undefined = undefined;
  /** For a new session: what its first request carries to the instance (X-Session-Key, Cookie). */
  protected newSession: NewSessionForward | undefined = undefined;
  #scheduler: Scheduler | null = null;
  /** performance.now() at the service match: the start of the request duration. */
  #t0 = 0;
  #gone: AbortController | null = null;
  #left = false;
  #released = false;

  /** The request is placed in session `s` (held: `release` it once answered). */
  protected abstract placed(s: SessionEntry): void;

  /**
   * The request cannot be placed: answer `err` (400 Host field, 404 unknown host, 429 rate limit, 503 +
   * Retry-After on queue timeout or a failed start, or anything else the scheduler threw).
   */
  protected abstract refused(err: unknown): void;

  /** The key is known and the scheduler is asked next (a path may start reading the client here). */
  protected keyed(): void {}

  /**
   * The prelude: checks the Host field, matches the service, resolves the session key, then places the
   * request in its running session at once or waits for one.
   * @param closer emits `close` when the client leaves during a wait (the response or socket), or null when
   * the path calls `leave` itself
   */
  protected place(ctx: PlacementContext, req: PlacedRequest, closer: EventEmitter | null): void {
    const { router, scheduler, keys } = ctx;
    const scan = req.scan;
    const bad = hostFieldProblem(scan.hosts, req.http11);
    if (bad !== null) {
      this.refused(bad);
      return;
    }
    const svc = router.match(scan.host);
    if (svc === undefined) {
      this.refused(unknownHost(scan.host, router.knownHosts));
      return;
    }
    this.svc = svc;
    this.#scheduler = scheduler;
    this.#t0 = performance.now();
    const cfg = svc.config;
    const { key, fresh } = resolveSessionKey(cfg, keys, scan.cookie, scan.sessionKey, scan.authorization);
    if (fresh) {
      // The client gets the key with the response, and the app sees it from this first request on.
      this.setCookie = newSessionCookie(keys, cfg.cookieName, key, req.peer, scan.forwardedProto);
      this.newSession = newSessionForward(cfg, scan.cookie, key);
    }
    this.keyed();
    const s = scheduler.route(svc, key);
    if (s !== undefined) {
      this.session = s;
      this.placed(s);
      return;
    }
    this.#wait(scheduler, svc, key, clientAddress(keys.trusted, req.peer, scan.forwardedFor), closer);
  }

  /** Asks the scheduler for a slot (resume, start, queue); the client leaving aborts the wait. */
  #wait(
    scheduler: Scheduler,
    svc: ServiceState,
    key: string,
    client: string | undefined,
    closer: EventEmitter | null,
  ): void {
    const gone = new AbortController();
    this.#gone = gone;
    const onClose = () => this.leave();
    closer?.once('close', onClose);
    scheduler.acquire(svc, key, gone.signal, client).then(
      (s) => {
        this.#gone = null;
        closer?.off('close', onClose);
        if (this.#left) scheduler.release(s);
        else {
          this.session = s;
          this.placed(s);
        }
      },
      (err: unknown) => {
        this.#gone = null;
        closer?.off('close', onClose);
        if (!this.#left) this.refused(err);
      },
    );
  }

  /** The client left: a wait is aborted (its slot, if one comes, is given back unanswered). */
  protected leave(): void {
    if (this.#left) return;
    this.#left = true;
    this.#gone?.abort();
  }

  /**
   * Gives the session slot back (once; nothing before `placed`) and meters the request: its status class
   * and its duration since the service matched.
   * @param status the status the client was answered, or undefined for what is not metered as a request
   * (an upgraded connection)
   */
  protected release(status: number | undefined): void {
    const s = this.session;
    if (s === null || this.#released) return;
    this.#released = true;
    (this.#scheduler as Scheduler).release(s);
    const m = (this.svc as ServiceState).metrics;
    if (m && status !== undefined) {
      m.byClass[(status / 100) | 0]?.inc();
      m.duration.observe((performance.now() - this.#t0) / 1000);
    }
  }
}
