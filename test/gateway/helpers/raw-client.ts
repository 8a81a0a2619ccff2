/**
 * @module
 * A raw HTTP/1.1 client for proxy tests: one TCP connection, requests written as bytes (pipelined if
 * wanted), responses read in order with Node's llhttp parser so keep-alive, framing and pipelining are
 * observed exactly as a client sees them. Closed after the test.
 */
import { connect, type Socket } from 'node:net';
import type { TestContext } from 'node:test';
import { HTTPParser, type HttpParser } from '../../../src/gateway/proxy/llhttp.ts';

/** One response as read from the wire. */
export interface RawResponse {
  status: number;
  /** Header names lower-cased; repeated headers joined with `, `. */
  headers: Record<string, string>;
  body: Buffer;
}

/** A client connection that reads responses as they come. */
export class RawClient {
  readonly socket: Socket;
  readonly #parser: HttpParser;
  readonly #done: RawResponse[] = [];
  readonly #waiters: Array<() => void> = [];
  /** Methods of the requests written, oldest first (a HEAD answer has no body). */
  readonly #methods: string[] = [];
  #current: RawResponse | null = null;
  #closed = false;
  #headers: string[] = [];

  constructor(socket: Socket) {
    this.socket = socket;
    const p = new HTTPParser();
    p.initialize(HTTPParser.RESPONSE, {});
    p[HTTPParser.kOnHeaders] = (h: string[]) => this.#headers.push(...h);
    p[HTTPParser.kOnHeadersComplete] = (
      _ma: number,
      _mi: number,
      raw: string[] | undefined,
      _m: number,
      _u: string,
      status: number,
    ) => {
      const list = raw ?? this.#headers.splice(0);
      const headers: Record<string, string> = {};
      for (let i = 0; i < list.length; i += 2) {
        const k = (list[i] as string).toLowerCase();
        headers[k] = headers[k] === undefined ? (list[i + 1] as string) : `${headers[k]}, ${list[i + 1]}`;
      }
      this.#current = { status, headers, body: Buffer.alloc(0) };
      return status >= 200 && this.#methods.shift() === 'HEAD' ? 1 : 0;
    };
    p[HTTPParser.kOnBody] = (b: Buffer) => {
      const c = this.#current as RawResponse;
      c.body = Buffer.concat([c.body, b]);
    };
    p[HTTPParser.kOnMessageComplete] = () => {
      const c = this.#current as RawResponse;
      this.#current = null;
      if (c.status >= 200 || c.status === 101) this.#done.push(c);
      this.#notify();
    };
    this.#parser = p;
    socket.on('data', (chunk: Buffer) => {
      if (this.#current?.status === 101) return; // upgraded: the test reads the socket itself
      p.execute(chunk);
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      this.#parser.finish();
      this.#closed = true;
      this.#notify();
    });
  }

  /** Writes `text` (one or more requests); `methods` lists their methods in order. */
  write(text: string | Buffer, ...methods: string[]): void {
    this.#methods.push(...methods);
    this.socket.write(text);
  }

  /** Writes one GET (keep-alive) for `path` with these extra header lines. */
  get(host: string, path: string, extra: Record<string, string> = {}): void {
    let head = `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n`;
    for (const [k, v] of Object.entries(extra)) head += `${k}: ${v}\r\n`;
    this.write(`${head}\r\n`, 'GET');
  }

  /**
   * The next `n` responses (waits for them).
   * @throws {Error} when the connection closes first
   */
  async read(n = 1): Promise<RawResponse[]> {
    while (this.#done.length < n) {
      if (this.#closed) throw new Error(`connection closed after ${this.#done.length} of ${n} responses`);
      await new Promise<void>((r) => this.#waiters.push(r));
    }
    return this.#done.splice(0, n);
  }

  /** Resolves once the server closed the connection. */
  async closed(): Promise<void> {
    while (!this.#closed) await new Promise<void>((r) => this.#waiters.push(r));
  }

  /** True once the connection is closed. */
  get isClosed(): boolean {
    return this.#closed;
  }

  #notify(): void {
    for (const w of this.#waiters.splice(0)) w();
  }
}

/** Opens a raw client to `baseUrl` (closed after the test). */
export async function rawClient(t: TestContext, baseUrl: string): Promise<RawClient> {
  const url = new URL(baseUrl);
  const socket = connect({ host: url.hostname, port: Number(url.port) });
  t.after(() => socket.destroy());
  await new Promise<void>((ok, fail) => {
    socket.once('connect', ok);
    socket.once('error', fail);
  });
  return new RawClient(socket);
}
