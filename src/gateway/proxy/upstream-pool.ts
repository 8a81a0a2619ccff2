/**
 * @module
 * Keep-alive TCP connections to one instance for the raw HTTP/1.1 path (http1-connection.ts): each
 * connection owns an llhttp RESPONSE parser and reports the response of the request it carries to its
 * current user (an exchange). Idle connections are kept most-recently-used first and dropped the moment
 * the instance closes them (node servers close idle keep-alive sockets after their keepAliveTimeout), so
 * a closed socket is never handed out. 1xx answers are dropped (as node:http did), an unasked-for 101 is a
 * failure, response trailers are dropped, and a connection that sends bytes beyond its answer is closed.
 * Replaces node:http's Agent; created by instance-pool.ts.
 */
import { connect, type Socket } from 'node:net';
import { createParser, HTTPParser, type HttpParser, isParseError } from './llhttp.ts';

/** What an upstream connection reports to the exchange using it. Calls come from parser callbacks. */
export interface UpstreamUser {
  /**
   * The final response head (1xx answers are dropped).
   * @returns 1 to read no body (an answer to HEAD), else 0
   */
  upstreamHead(status: number, message: string, raw: string[], keepAlive: boolean): number;
  /** A piece of the decoded response body. */
  upstreamBody(chunk: Buffer): void;
  /** The response is complete; the user hands the connection back with `done`. */
  upstreamEnd(): void;
  /** The connection failed (refused, reset, closed, timed out, bad response) before the response ended. */
  upstreamFailed(timedOut: boolean): void;
  /** The connection's write buffer drained (request body backpressure). */
  upstreamDrain(): void;
  /** The client socket the response goes to: corked around each parse so a head and body leave in one write. */
  readonly client: Socket;
}

/** One TCP connection to an instance. */
export class UpstreamConn {
  readonly socket: Socket;
  readonly #pool: UpstreamPool;
  readonly #parser: HttpParser;
  #headers: string[] = [];
  /** Header lines go to the current head (false in a body or trailers: those are dropped). */
  #inHead = false;
  /** The message being parsed is an interim (1xx) answer: its end is not the response's end. */
  interim = false;
  /** The exchange this connection serves now, or null while idle. */
  user: UpstreamUser | null = null;
  /** Requests it served before the current one (0: a fresh connection). */
  served = 0;
  /** A byte of the current response arrived. */
  answered = false;
  /** The instance's last response allows reuse. */
  keepAlive = true;
  #timeoutMs = 0;

  constructor(pool: UpstreamPool) {
    this.#pool = pool;
    this.socket = connect({ host: pool.host, port: pool.port, noDelay: true });
    this.#parser = createParser(HTTPParser.RESPONSE, this, {
      onMessageBegin,
      onHeaders,
      onHeadersComplete,
      onBody,
      onMessageComplete,
    });
    const s = this.socket;
    s.on('data', (chunk: Buffer) => this.#onData(chunk));
    s.on('end', () => this.#onEnd());
    s.on('error', () => {}); // 'close' follows and reports it
    s.on('close', () => this.#onClose());
    s.on('timeout', () => this.#onTimeout());
    s.on('drain', () => this.user?.upstreamDrain());
  }

  /** Sets the inactivity timeout (ms, 0 = none) when it differs from the current one. */
  setTimeout(ms: number): void {
    if (ms === this.#timeoutMs) return;
    this.#timeoutMs = ms;
    this.socket.setTimeout(ms);
  }

  /**
   * Ends the current request: back to the pool when `reusable` and the instance allows it, else closed.
   * @param reusable the whole request went out and the whole response came back
   */
  done(reusable: boolean): void {
    this.user = null;
    this.served++;
    this.answered = false;
    if (reusable && this.keepAlive && !this.socket.destroyed) {
      if (this.socket.isPaused()) this.socket.resume();
      this.#pool.park(this);
    } else this.destroy();
  }

  /** Closes the connection; its user (if any) is not told. */
  destroy(): void {
    this.user = null;
    this.socket.destroy();
  }

  #onData(chunk: Buffer): void {
    const user = this.user;
    if (user === null) {
      this.socket.destroy(); // bytes nobody asked for: an idle connection is not reusable
      return;
    }
    this.answered = true;
    const client = user.client;
    client.cork();
    const r = this.#parser.execute(chunk);
    client.uncork();
    if (isParseError(r)) this.fail(false);
  }

  #onEnd(): void {
    // A close-delimited body ends here: finish() completes the message (upstreamEnd) when it was one.
    if (this.user !== null && this.answered) {
      const client = this.user.client;
      client.cork();
      this.#parser.finish();
      client.uncork();
    }
    this.socket.destroy();
  }

  #onTimeout(): void {
    if (this.user === null) this.socket.destroy();
    else this.fail(true);
  }

  #onClose(): void {
    this.#pool.remove(this);
    this.#parser.close();
    if (this.user !== null) this.fail(false);
  }

  /** @internal the connection failed (also from a parser callback) */
  fail(timedOut: boolean): void {
    const user = this.user;
    this.destroy();
    user?.upstreamFailed(timedOut);
  }

  /** @internal parser callback: a message begins */
  beginMessage(): void {
    if (this.user === null) {
      this.destroy(); // more than the answer: the rest of the stream is not ours to hand to the next request
      return;
    }
    this.#headers = [];
    this.#inHead = true;
  }

  /** @internal parser callback: the head is complete; its headers */
  takeHeaders(headers: string[] | undefined): string[] {
    this.#inHead = false;
    if (headers !== undefined) return headers;
    const h = this.#headers;
    this.#headers = [];
    return h;
  }

  /** @internal parser callback: header lines (part of a long head, or trailers, which are dropped) */
  addHeaders(headers: string[]): void {
    if (!this.#inHead) return;
    for (const h of headers) this.#headers.push(h);
  }
}

type ParserWithConn = HttpParser & { owner: UpstreamConn };

function onMessageBegin(this: ParserWithConn): void {
  this.owner.beginMessage();
}

function onHeaders(this: ParserWithConn, headers: string[]): void {
  this.owner.addHeaders(headers);
}

function onHeadersComplete(
  this: ParserWithConn,
  _major: number,
  _minor: number,
  headers: string[] | undefined,
  _method: number,
  _url: string | undefined,
  status: number,
  message: string,
  _upgrade: boolean,
  keepAlive: boolean,
): number {
  const conn = this.owner;
  const raw = conn.takeHeaders(headers);
  const user = conn.user;
  if (user === null) {
    conn.destroy();
    return 0;
  }
  if (status === 101) {
    conn.fail(false); // this path never asks for an upgrade: the stream is no longer HTTP
    return 0;
  }
  conn.interim = status < 200;
  if (conn.interim) return 0; // 100 Continue, 103 Early Hints: not relayed (as node:http did)
  conn.keepAlive = keepAlive;
  return user.upstreamHead(status, message, raw, keepAlive);
}

function onBody(this: ParserWithConn, chunk: Buffer): void {
  this.owner.user?.upstreamBody(chunk);
}

function onMessageComplete(this: ParserWithConn): void {
  const conn = this.owner;
  if (!conn.interim) conn.user?.upstreamEnd();
  conn.interim = false; // after a 1xx the final answer follows
}

/** Idle connections kept per instance at most; more are closed when their request ends. */
export const MAX_IDLE = 256;

/** The keep-alive connections to one instance. */
export class UpstreamPool {
  readonly host: string;
  readonly port: number;
  readonly #idle: UpstreamConn[] = [];
  #destroyed = false;

  constructor(host: string, port: number) {
    this.host = host;
    this.port = port;
  }

  /**
   * A connection for `user`: the most recently used idle one, or a new one (also when `fresh`).
   * @param timeoutMs inactivity timeout while it serves (ms, 0 = none)
   */
  acquire(user: UpstreamUser, timeoutMs: number, fresh = false): UpstreamConn {
    const conn = (!fresh && this.#idle.pop()) || new UpstreamConn(this);
    conn.user = user;
    conn.setTimeout(timeoutMs);
    return conn;
  }

  /** @internal a connection done with its request */
  park(conn: UpstreamConn): void {
    if (this.#destroyed || this.#idle.length >= MAX_IDLE) conn.destroy();
    else this.#idle.push(conn);
  }

  /** @internal a connection that closed */
  remove(conn: UpstreamConn): void {
    const at = this.#idle.indexOf(conn);
    if (at >= 0) this.#idle.splice(at, 1);
  }

  /** Closes the idle connections; connections in use close when their request ends. */
  destroy(): void {
    this.#destroyed = true;
    for (const conn of this.#idle.splice(0)) conn.destroy();
  }
}
