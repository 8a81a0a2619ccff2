/**
 * @module
 * One client connection of the public port, parsed with Node's llhttp directly (no IncomingMessage,
 * ServerResponse, ClientRequest or Agent): node:http cost the gateway most of its throughput — 10.4k
 * req/s through it and 13.4k for a bare node:http proxy against nginx's 24.6k with one worker, while a
 * raw prototype reached ~22k (0.85x nginx) on the same 2-core machine. Requests are answered in order;
 * pipelined ones wait in a queue (reading stops meanwhile). Anything unusual — an Upgrade (WebSocket),
 * `Expect`, HTTP/1.0, CONNECT — hands the whole connection at that request boundary to the node:http
 * server of the slow path (http-proxy.ts, ws-proxy.ts). Created by front-server.ts per accepted socket.
 */
import type { Socket } from 'node:net';
import { TetherError } from '../../common/errors.ts';
import { Exchange, type ExchangeHost, type ProxyContext } from './exchange.ts';
import { headerLines, scanRequestHeaders } from './headers.ts';
import {
  createParser,
  HTTPParser,
  type HttpParser,
  isParseError,
  METHODS,
  type ParseError,
  STOP_AFTER_HEAD,
} from './llhttp.ts';
import { sendSocketError } from './respond.ts';

/** A request head may take this long to arrive whole (ms), against slowloris clients. */
export const HEADERS_TIMEOUT_MS = 60_000;
/** An idle keep-alive connection is closed after this long (ms). */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** What a connection needs from its server (front-server.ts). */
export interface ConnectionServer {
  context: ProxyContext;
  /** Gives the socket, with `bytes` put back in front of its unread data, to the node:http server. */
  handOff(conn: Http1Connection, bytes: Buffer): void;
  /** The connection closed (or was handed off). */
  forget(conn: Http1Connection): void;
}

/** One client connection on the raw HTTP/1.1 path. */
export class Http1Connection implements ExchangeHost {
  readonly socket: Socket;
  readonly context: ProxyContext;
  readonly #server: ConnectionServer;
  #parser: HttpParser | null;
  #headers: string[] = [];
  #url = '';
  /** The request being answered. */
  #current: Exchange | null = null;
  /** Pipelined requests waiting for the current one. */
  readonly #queue: Exchange[] = [];
  /** The request whose body is being read. */
  #reading: Exchange | null = null;
  /** No more requests are read (the client asked to close, or sent garbage). */
  #closing = false;
  /** A parse error to answer once the current exchange is done. */
  #error: TetherError | null = null;
  /** Set by the head callback when the request goes to node:http: its head re-serialised. */
  #handOffHead: string | null = null;
  /** Bytes waiting for the hand-off (the current exchange is not done yet). */
  #handOff: Buffer[] | null = null;
  /** 0: no request head in progress; -1: one began in the last read; else when it began (epoch ms). */
  #headStart = 0;
  #uploadBlocked = false;
  #paused = false;
  /** The last finished exchange left the connection open. */
  #lastKeepAlive = true;
  /** exchangeDone is starting queued requests (a finished one must not start the next itself). */
  #advancing = false;

  constructor(socket: Socket, server: ConnectionServer) {
    this.socket = socket;
    this.context = server.context;
    this.#server = server;
    this.#parser = createParser(HTTPParser.REQUEST, this, {
      onMessageBegin,
      onHeaders,
      onHeadersComplete,
      onBody,
      onMessageComplete,
    });
    socket.setTimeout(server.context.keepAliveTimeoutMs ?? KEEP_ALIVE_TIMEOUT_MS);
    socket.on('data', this.#onData);
    socket.on('end', this.#onEnd);
    socket.on('error', noop); // 'close' follows
    socket.on('close', this.#onClose);
    socket.on('drain', this.#onDrain);
    socket.on('timeout', this.#onTimeout);
  }

  /** Closes the connection now (gateway shutdown). */
  destroy(): void {
    this.socket.destroy();
  }

  exchangeDone(ex: Exchange): void {
    if (ex !== this.#current) return;
    this.#current = null;
    this.#lastKeepAlive = ex.keepAlive;
    // A loop, not recursion: a queued request answered at once (404, 503) ends inside its start(), and
    // thousands of pipelined ones would otherwise nest that deep and overflow the stack.
    if (this.#advancing) return;
    this.#advancing = true;
    while (this.#current === null && this.#advance()) {}
    this.#advancing = false;
  }

  /** After a finished exchange: starts the next queued request (true), or ends, hands off or reads on. */
  #advance(): boolean {
    if (this.socket.destroyed) return false;
    if (!this.#lastKeepAlive) {
      this.socket.end();
      return false;
    }
    const next = this.#queue.shift();
    if (next !== undefined) {
      this.#current = next;
      this.#updateReading();
      next.start();
      return true;
    }
    // Requests read before a parse error are answered first, in order; then the error.
    if (this.#error !== null) sendSocketError(this.socket, this.#error);
    else if (this.#handOff !== null) this.#doHandOff();
    else this.#updateReading();
    return false;
  }

  blockUpload(blocked: boolean): void {
    if (this.#uploadBlocked === blocked) return;
    this.#uploadBlocked = blocked;
    this.#updateReading();
  }

  #updateReading(): void {
    const pause = this.#uploadBlocked || this.#queue.length > 0 || this.#handOff !== null;
    if (pause === this.#paused) return;
    this.#paused = pause;
    if (pause) this.socket.pause();
    else this.socket.resume();
  }

  readonly #onData = (chunk: Buffer): void => {
    if (this.#handOff !== null) {
      this.#handOff.push(chunk);
      return;
    }
    const parser = this.#parser;
    if (parser === null || (this.#closing && this.#reading === null)) return; // nothing more is read
    if (this.#headStart > 0 && Date.now() - this.#headStart > HEADERS_TIMEOUT_MS) {
      this.socket.destroy(); // a head trickling in for too long (slowloris)
      return;
    }
    const r = parser.execute(chunk);
    if (isParseError(r)) {
      this.#parseError(r);
      return;
    }
    if (this.#headStart < 0) this.#headStart = Date.now();
    if (this.#handOffHead !== null) {
      this.#handOff = [Buffer.from(this.#handOffHead, 'latin1'), chunk.subarray(r)];
      this.#handOffHead = null;
      this.#closing = true;
      if (this.#current === null) this.#doHandOff();
      else this.#updateReading();
    }
  };

  #parseError(err: ParseError): void {
    this.#closing = true;
    const e =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? new TetherError('headers_too_large', 'request headers too large')
        : new TetherError('invalid_request', 'malformed HTTP request');
    if (this.#reading !== null) {
      this.socket.destroy(); // a broken body: the exchange cannot go on
      return;
    }
    if (this.#current === null) sendSocketError(this.socket, e);
    else this.#error = e; // answered after the current response
  }

  readonly #onEnd = (): void => {
    // As node:http does without allowHalfOpen: a client that ends its side abandons what is in flight.
    if (this.#current === null) this.socket.end();
    else this.socket.destroy();
  };

  readonly #onClose = (): void => {
    this.#server.forget(this);
    const current = this.#current;
    this.#current = null;
    current?.abort();
    for (const ex of this.#queue.splice(0)) ex.abort();
    this.#reading = null;
    this.#parser?.close();
    this.#parser = null;
  };

  readonly #onDrain = (): void => {
    this.#current?.clientDrain();
  };

  readonly #onTimeout = (): void => {
    // Idle keep-alive, a stalled head, or a client that stopped sending a body that was already answered
    // (the timer is not armed again without traffic, so ignoring that case would keep the socket forever).
    // An exchange still waiting for its instance is bounded by the instance timeout instead.
    const current = this.#current;
    if (current === null || current.answered) this.socket.destroy();
  };

  #doHandOff(): void {
    const bytes = this.#handOff as Buffer[];
    this.#handOff = null;
    const s = this.socket;
    s.off('data', this.#onData);
    s.off('end', this.#onEnd);
    s.off('error', noop);
    s.off('close', this.#onClose);
    s.off('drain', this.#onDrain);
    s.off('timeout', this.#onTimeout);
    s.setTimeout(0);
    this.#server.forget(this);
    // Not closed here: this may run inside a parser callback; unreferenced, it is collected.
    this.#parser = null;
    this.#server.handOff(this, bytes.length === 1 ? (bytes[0] as Buffer) : Buffer.concat(bytes));
  }

  /** @internal parser callback */
  messageBegin(): void {
    this.#headStart = -1;
    this.#headers = [];
    this.#url = '';
  }

  /** @internal parser callback: part of a long head, or the trailers of a chunked body (dropped) */
  addHeaders(headers: string[], url: string): void {
    if (this.#headStart === 0) return; // no head in progress: trailers
    for (const h of headers) this.#headers.push(h);
    this.#url += url;
  }

  /** @internal parser callback */
  headersComplete(
    major: number,
    minor: number,
    headers: string[] | undefined,
    method: number,
    url: string | undefined,
    upgrade: boolean,
    keepAlive: boolean,
  ): number {
    this.#headStart = 0;
    let raw = headers;
    if (raw === undefined) {
      raw = this.#headers;
      this.#headers = [];
    }
    let target = url;
    if (target === undefined) {
      target = this.#url;
      this.#url = '';
    }
    if (this.#closing) return STOP_AFTER_HEAD; // after `Connection: close` nothing more is read
    const name = METHODS[method] ?? 'GET';
    const scan = scanRequestHeaders(raw);
    if (upgrade || major !== 1 || minor !== 1 || name === 'CONNECT' || scan.expect) {
      this.#handOffHead = `${name} ${target} HTTP/${major}.${minor}\r\n${headerLines(raw)}\r\n`;
      return STOP_AFTER_HEAD;
    }
    const ex = new Exchange(this, { method: name, url: target, raw, scan, keepAlive });
    if (!keepAlive) this.#closing = true;
    this.#reading = ex;
    if (this.#current === null) {
      this.#current = ex;
      ex.start();
    } else {
      this.#queue.push(ex);
      this.#updateReading();
    }
    return 0;
  }

  /** @internal parser callback */
  body(chunk: Buffer): void {
    this.#reading?.requestBody(chunk);
  }

  /** @internal parser callback */
  messageComplete(): void {
    const ex = this.#reading;
    this.#reading = null;
    ex?.requestEnd();
  }
}

function noop(): void {}

type ParserWithConn = HttpParser & { owner: Http1Connection };

function onMessageBegin(this: ParserWithConn): void {
  this.owner.messageBegin();
}

function onHeaders(this: ParserWithConn, headers: string[], url: string): void {
  this.owner.addHeaders(headers, url);
}

function onHeadersComplete(
  this: ParserWithConn,
  major: number,
  minor: number,
  headers: string[] | undefined,
  method: number,
  url: string | undefined,
  _status: number,
  _message: string,
  upgrade: boolean,
  keepAlive: boolean,
): number {
  return this.owner.headersComplete(major, minor, headers, method, url, upgrade, keepAlive);
}

function onBody(this: ParserWithConn, chunk: Buffer): void {
  this.owner.body(chunk);
}

function onMessageComplete(this: ParserWithConn): void {
  this.owner.messageComplete();
}
