/**
 * @module
 * The slow path for plain HTTP on node:http: requests the raw HTTP/1.1 path (http1-connection.ts) hands
 * over with their connection (`Expect: 100-continue`, HTTP/1.0). Placed like every request (placement.ts:
 * Host, service, session), then forwarded to its instance on a fresh connection with streamed bodies both
 * ways; the request counts in flight until the response ends. Bodies are relayed with explicit error listeners rather than `pipeline()` (an
 * AbortController per call on Node 20). Created by gateway.ts; WebSocket upgrades are in ws-proxy.ts.
 */
import { type ClientRequest, type IncomingMessage, request, type ServerResponse } from 'node:http';
import { TetherError } from '../../common/errors.ts';
import type { Logger } from '../../common/log.ts';
import type { SessionEntry } from '../state.ts';
import { type NewSessionForward, requestHeaders, responseHeaders, scanRequestHeaders } from './headers.ts';
import { type PlacedRequest, Placement, type PlacementContext } from './placement.ts';
import { sendError } from './respond.ts';

/** Options of `createHttpProxy`. */
export interface HttpProxyOptions extends PlacementContext {
  /** Inactivity timeout of an upstream request (ms); 0 = none. */
  proxyTimeoutMs: number;
  /** Where an unknown error is logged with the id its 500 names. */
  log: Logger;
}

/** Creates the `request` listener of the slow-path node:http server. */
export function createHttpProxy(o: HttpProxyOptions): (req: IncomingMessage, res: ServerResponse) => void {
  return function proxyRequest(req: IncomingMessage, res: ServerResponse): void {
    new SlowRequest(o, req, res).start();
  };
}

/** What placing a node:http request reads of it (the slow path and upgrades). */
export function placedRequest(req: IncomingMessage): PlacedRequest {
  return {
    scan: scanRequestHeaders(req.rawHeaders),
    http11: req.httpVersion === '1.1',
    peer: req.socket.remoteAddress,
  };
}

/** One request of the slow path: placed (placement.ts), then forwarded on a fresh instance connection. */
class SlowRequest extends Placement {
  readonly #o: HttpProxyOptions;
  readonly #req: IncomingMessage;
  readonly #res: ServerResponse;

  constructor(o: HttpProxyOptions, req: IncomingMessage, res: ServerResponse) {
    super();
    this.#o = o;
    this.#req = req;
    this.#res = res;
  }

  /** Places the request; the response closing ends a wait. */
  start(): void {
    this.place(this.#o, placedRequest(this.#req), this.#res);
  }

  protected override refused(err: unknown): void {
    sendError(this.#res, err, this.#o.log);
  }

  /** Forwards the request to the instance of `s` and relays the answer; releases `s` when the response closes. */
  protected override placed(s: SessionEntry): void {
    const req = this.#req;
    const res = this.#res;
    const inst = s.instance;
    const hasBody =
      req.headers['transfer-encoding'] !== undefined ||
      (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
    let failed = false;
    const upstream = forwardRequest(req, inst, {
      upgrade: false,
      timeoutMs: this.#o.proxyTimeoutMs,
      newSession: this.newSession,
    });
    if (upstream === null) {
      sendError(res, unforwardable());
      this.release(res.statusCode);
      return;
    }
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
      this.release(res.statusCode);
    });
    const setCookie = this.setCookie;
    upstream.once('response', (ures) => {
      res.writeHead(ures.statusCode ?? 502, responseHeaders(ures.rawHeaders, setCookie));
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
