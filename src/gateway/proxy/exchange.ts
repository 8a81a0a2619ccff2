/**
 * @module
 * One request/response of the raw HTTP/1.1 path: placed like every request (placement.ts: Host, service,
 * session), send the re-serialised head and the re-framed body to a pooled instance connection, relay the
 * response with backpressure both ways, answer failures as JSON (502 before the head, a reset after it),
 * and release the session exactly once. Driven by http1-connection.ts (request side) and upstream-pool.ts (response
 * side); no closures per request on the fast path (a scheduler wait has its own).
 */
import type { Socket } from 'node:net';
import { TetherError } from '../../common/errors.ts';
import type { Logger } from '../../common/log.ts';
import type { SessionEntry } from '../state.ts';
import {
  codingsBeforeChunked,
  forwardHeaders,
  hasHeader,
  headerLines,
  type NewSessionForward,
  type RequestHeaderScan,
  responseHeaders,
} from './headers.ts';
import { SKIP_BODY } from './llhttp.ts';
import { Placement, type PlacementContext } from './placement.ts';
import { clientSafeError, errorResponse } from './respond.ts';
import type { UpstreamConn, UpstreamUser } from './upstream-pool.ts';

/** What every exchange of a gateway shares. */
export interface ProxyContext extends PlacementContext {
  /** Where an unknown error is logged with the id its 500 names. */
  log: Logger;
  /** Inactivity timeout of an instance connection while it serves (ms); 0 = none. */
  proxyTimeoutMs: number;
  /** An idle client connection (or one owing only the rest of a body) is closed after this long (ms). @default 65000 */
  keepAliveTimeoutMs?: number;
}

/** The client connection an exchange belongs to (http1-connection.ts). */
export interface ExchangeHost {
  readonly socket: Socket;
  readonly context: ProxyContext;
  /** The response is complete and the request was read whole: the next request may go. */
  exchangeDone(ex: Exchange): void;
  /** Stops (true) or restarts reading the client while the instance cannot take more body. */
  blockUpload(blocked: boolean): void;
}

const NO_BODY = 0;
const LENGTH_BODY = 1;
const CHUNKED_BODY = 2;
const CRLF = '\r\n';
const LAST_CHUNK = '0\r\n\r\n';

/** One request and its response. */
export class Exchange extends Placement implements UpstreamUser {
  readonly client: Socket;
  readonly #host: ExchangeHost;
  /** The head sent to the instance (for a new session its Cookie carries the new key). */
  #head: string;
  readonly #method: string;
  readonly #url: string;
  readonly #raw: string[];
  readonly #scan: RequestHeaderScan;
  readonly #bodyKind: number;
  readonly #isHead: boolean;
  /** The client keeps the connection open after this exchange. */
  readonly keepAlive: boolean;
  /** Framed body pieces read before an instance connection was there. */
  #pending: Array<string | Buffer> | null = null;
  #requestDone = false;
  #up: UpstreamConn | null = null;
  #headSent = false;
  #responseDone = false;
  #chunkedOut = false;
  #status = 200;
  #retried = false;
  #aborted = false;

  /**
   * @param host the client connection
   * @param request method, target as sent, raw headers, what `scanRequestHeaders(raw)` read, and whether
   * the client keeps the connection (HTTP/1.1 without `Connection: close`)
   */
  constructor(
    host: ExchangeHost,
    request: { method: string; url: string; raw: string[]; scan: RequestHeaderScan; keepAlive: boolean },
  ) {
    super();
    this.#host = host;
    this.client = host.socket;
    const { method, url, raw, scan } = request;
    this.#method = method;
    this.#url = url;
    this.#raw = raw;
    this.#scan = scan;
    this.keepAlive = request.keepAlive;
    this.#isHead = method === 'HEAD';
    this.#bodyKind = scan.chunked ? CHUNKED_BODY : scan.length ? LENGTH_BODY : NO_BODY;
    this.#head = ''; // built in start(), once the session key is known
  }

  /** The request head for the instance; `newSession` for a new session's first request. */
  #buildHead(newSession: NewSessionForward | undefined): string {
    const scan = this.#scan;
    const fwd = forwardHeaders(this.#raw, {
      ip: this.client.remoteAddress ?? '',
      proto: 'http',
      host: scan.host,
      connection: scan.connection,
      newSession,
    });
    return (
      `${this.#method} ${this.#url} HTTP/1.1\r\n${headerLines(fwd)}` +
      // The body is re-chunked; codings before chunked (`gzip, chunked`) are the content's and go on as sent.
      (this.#bodyKind === CHUNKED_BODY ? `Transfer-Encoding: ${scan.transferEncoding}\r\n\r\n` : CRLF)
    );
  }

  /** Routes and places the request (it is the connection's current one now); `abort` ends a wait. */
  start(): void {
    this.place(this.#host.context, this, null);
  }

  /** What `place` reads of the request (see `PlacedRequest`). */
  get scan(): RequestHeaderScan {
    return this.#scan;
  }

  /** Always: HTTP/1.0 takes the node:http path. */
  get http11(): boolean {
    return true;
  }

  get peer(): string | undefined {
    return this.client.remoteAddress;
  }

  protected override keyed(): void {
    // The app sees a new session's key from this first request on (the client gets it with the response).
    this.#head = this.#buildHead(this.newSession);
    if (this.#pending !== null) this.#host.blockUpload(true); // body read while queued: no more until placed
  }

  protected override placed(): void {
    this.#connect(false);
  }

  protected override refused(err: unknown): void {
    this.#respondError(err);
  }

  /** The response went out whole (or as an error); only the rest of the request body may be owed. */
  get answered(): boolean {
    return this.#responseDone;
  }

  /** A piece of the decoded request body (from the client parser). */
  requestBody(chunk: Buffer): void {
    if (this.#responseDone || this.#aborted) return; // answered already: the rest is read and dropped
    if (this.#bodyKind === CHUNKED_BODY) {
      this.#send(`${chunk.length.toString(16)}\r\n`);
      this.#send(chunk);
      this.#send(CRLF);
    } else this.#send(chunk);
  }

  /** The request was read whole. */
  requestEnd(): void {
    this.#requestDone = true;
    if (this.#responseDone) {
      this.#host.exchangeDone(this);
      return;
    }
    if (this.#bodyKind === CHUNKED_BODY && !this.#aborted) this.#send(LAST_CHUNK);
  }

  /** The client went away: stop the instance request and release the session. */
  abort(): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.leave();
    const up = this.#up;
    this.#up = null;
    up?.destroy();
    this.release(this.#status);
  }

  /** The client socket drained: read the instance again. */
  clientDrain(): void {
    this.#up?.socket.resume();
  }

  upstreamHead(status: number, message: string, raw: string[]): number {
    this.#status = status;
    this.#headSent = true;
    let head = `HTTP/1.1 ${status} ${message}\r\n${headerLines(responseHeaders(raw, this.setCookie))}`;
    if (!this.#isHead && status !== 204 && status !== 304 && !hasHeader(raw, 'content-length')) {
      this.#chunkedOut = true; // chunked or close-delimited from the instance
      const codings = codingsBeforeChunked(raw); // e.g. gzip: the body is still coded so
      head += codings ? `Transfer-Encoding: ${codings}, chunked\r\n` : 'Transfer-Encoding: chunked\r\n';
    }
    if (!this.keepAlive) head += 'Connection: close\r\n';
    this.client.write(`${head}\r\n`, 'latin1');
    return this.#isHead ? SKIP_BODY : 0;
  }

  upstreamBody(chunk: Buffer): void {
    const client = this.client;
    let ok: boolean;
    if (this.#chunkedOut) {
      client.write(`${chunk.length.toString(16)}\r\n`, 'latin1');
      client.write(chunk);
      ok = client.write(CRLF, 'latin1');
    } else ok = client.write(chunk);
    if (!ok) this.#up?.socket.pause();
  }

  upstreamEnd(): void {
    if (this.#chunkedOut) this.client.write(LAST_CHUNK, 'latin1');
    const up = this.#up;
    this.#up = null;
    // Reusable only when the instance also got the whole request.
    up?.done(this.#requestDone && !this.#aborted);
    this.#host.blockUpload(false);
    this.#finish();
  }

  upstreamFailed(timedOut: boolean): void {
    const up = this.#up;
    this.#up = null;
    this.#host.blockUpload(false);
    if (this.#aborted || this.#responseDone || up === null) return;
    const name = this.session?.instance.name ?? '?';
    if (this.#headSent) {
      this.client.destroy(); // the client saw a head: it must see the response break, not end
      return;
    }
    // A reused keep-alive connection may have been closed by the instance just as we wrote: one retry on a
    // fresh connection when nothing of the answer came and the request has no body (safe to send again).
    if (!timedOut && up.served > 0 && !up.answered && this.#bodyKind === NO_BODY && !this.#retried) {
      this.#retried = true;
      this.#connect(true);
      return;
    }
    this.#respondError(
      new TetherError(
        'bad_gateway',
        timedOut ? `instance ${name} did not answer in time` : `instance ${name} failed while serving the request`,
      ),
    );
  }

  upstreamDrain(): void {
    this.#host.blockUpload(false);
  }

  #connect(fresh: boolean): void {
    const inst = (this.session as SessionEntry).instance;
    const pool = inst.upstream;
    if (pool === null) {
      this.#respondError(new TetherError('bad_gateway', `instance ${inst.name} failed while serving the request`));
      return;
    }
    const up = pool.acquire(this, this.#host.context.proxyTimeoutMs, fresh);
    this.#up = up;
    up.socket.write(this.#head, 'latin1');
    const pending = this.#pending;
    if (pending !== null) {
      this.#pending = null;
      for (const piece of pending) this.#send(piece);
      this.#host.blockUpload(up.socket.writableNeedDrain);
    }
  }

  /** Sends a framed body piece to the instance, or keeps it until there is a connection. */
  #send(piece: string | Buffer): void {
    const up = this.#up;
    if (up === null) {
      if (this.#pending === null) this.#pending = [];
      this.#pending.push(piece);
      this.#host.blockUpload(true); // wait for placement without reading more
      return;
    }
    const ok = typeof piece === 'string' ? up.socket.write(piece, 'latin1') : up.socket.write(piece);
    if (!ok) this.#host.blockUpload(true);
  }

  /** Answers `err` as JSON (before any head went out) and ends the exchange. */
  #respondError(err: unknown): void {
    if (this.#aborted) return;
    const e = clientSafeError(err, this.#host.context.log);
    this.#status = e.status;
    this.#headSent = true;
    this.client.write(errorResponse(e, !this.keepAlive));
    this.#pending = null;
    this.#host.blockUpload(false);
    this.#finish();
  }

  #finish(): void {
    this.#responseDone = true;
    this.release(this.#status);
    if (this.#requestDone) this.#host.exchangeDone(this);
  }
}
