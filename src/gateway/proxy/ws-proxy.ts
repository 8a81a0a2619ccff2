/**
 * @module
 * WebSocket (and any HTTP/1.1 Upgrade) pass-through: placed like a plain request (placement.ts), send the
 * upgrade to the instance, relay its 101 and then pipe bytes both ways. The session counts the
 * connection in flight (activity) until it closes, or until the session ends. No half-open connections: when either side ends, both
 * are closed (a half-open socket would keep its session active forever). A client that leaves before the
 * 101 aborts the upstream request; the instance has `timeoutMs` to answer the upgrade.
 * Created by gateway.ts for the `upgrade` event.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { isTetherError, TetherError } from '../../common/errors.ts';
import type { SessionEntry } from '../state.ts';
import { headerLines, responseHeaders } from './headers.ts';
import { forwardRequest, placedRequest, unforwardable, upstreamFailed } from './http-proxy.ts';
import { Placement, type PlacementContext } from './placement.ts';
import { sendSocketError } from './respond.ts';

/** Options of `createUpgradeProxy`. */
export interface UpgradeProxyOptions extends PlacementContext {
  /** How long an instance may take to answer an upgrade request (ms); 0 = no limit. */
  timeoutMs: number;
}

/** Creates the `upgrade` listener of the public server. */
export function createUpgradeProxy(
  o: UpgradeProxyOptions,
): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  return function proxyUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    new UpgradeRequest(o, req, socket, head).start();
  };
}

/**
 * One upgrade: placed (placement.ts), then sent to the instance; its 101 makes a byte pipe both ways. Not
 * metered as a request (a connection lasts as long as it likes).
 */
class UpgradeRequest extends Placement {
  readonly #o: UpgradeProxyOptions;
  readonly #req: IncomingMessage;
  readonly #socket: Duplex;
  readonly #head: Buffer;
  #early: EarlyReader | null = null;

  constructor(o: UpgradeProxyOptions, req: IncomingMessage, socket: Duplex, head: Buffer) {
    super();
    this.#o = o;
    this.#req = req;
    this.#socket = socket;
    this.#head = head;
  }

  /** Places the upgrade; the socket closing ends a wait. */
  start(): void {
    this.place(this.#o, placedRequest(this.#req), this.#socket);
  }

  protected override keyed(): void {
    const socket = this.#socket;
    this.#early = readEarly(socket, this.#head); // the client leaving is seen while the upgrade waits
    socket.on('error', () => socket.destroy());
  }

  protected override refused(err: unknown): void {
    sendSocketError(this.#socket, isTetherError(err) ? err : upstreamFailed('?'));
  }

  protected override placed(s: SessionEntry): void {
    const socket = this.#socket;
    const early = this.#early as EarlyReader;
    const setCookie = this.setCookie;
    const inst = s.instance;
    socket.once('close', () => this.release(undefined));
    (socket as Socket).setNoDelay?.(true);
    const upstream = forwardRequest(this.#req, inst, {
      upgrade: true,
      timeoutMs: this.#o.timeoutMs,
      newSession: this.newSession,
    });
    if (upstream === null) {
      sendSocketError(socket, unforwardable());
      return;
    }
    // The client left before the instance answered: abort the upstream request too.
    const abortUpstream = () => upstream.destroy();
    socket.once('close', abortUpstream);
    upstream.once('upgrade', (ures, usocket, uhead) => {
      socket.off('close', abortUpstream);
      const pending = early.stop();
      if (socket.destroyed) {
        usocket.destroy();
        this.release(undefined);
        return;
      }
      usocket.setTimeout(0); // the request's timeout was for the answer only; an open WebSocket may idle
      usocket.on('error', () => socket.destroy());
      socket.on('error', () => usocket.destroy());
      usocket.once('close', () => socket.destroy());
      socket.once('close', () => usocket.destroy());
      // No half-open connections: once either side ends, flush what was written and close both.
      const closeBoth = () => {
        (socket as Socket).destroySoon();
        usocket.destroySoon();
      };
      usocket.once('end', closeBoth);
      socket.once('end', closeBoth);
      usocket.setNoDelay(true);
      // Ending the session (expiry, or its address beyond its share) closes the connection, also when other
      // sessions keep the instance running.
      const close = () => {
        socket.destroy();
        usocket.destroy();
      };
      s.closers ??= new Set();
      s.closers.add(close);
      socket.once('close', () => s.closers?.delete(close));
      const raw = responseHeaders(ures.rawHeaders, setCookie, true);
      socket.write(
        `HTTP/1.1 ${ures.statusCode} ${ures.statusMessage ?? 'Switching Protocols'}\r\n${headerLines(raw)}\r\n`,
      );
      if (uhead.length > 0) socket.write(uhead);
      if (pending.length > 0) usocket.write(pending);
      usocket.pipe(socket);
      socket.pipe(usocket);
    });
    upstream.once('response', (ures) => {
      // The instance refused the upgrade: relay its answer as is.
      socket.off('close', abortUpstream);
      early.stop();
      socket.resume(); // keep reading (and dropping) so the client's close is seen and the session released
      socket.once('close', () => ures.destroy());
      const raw = responseHeaders(ures.rawHeaders, setCookie);
      socket.write(
        `HTTP/1.1 ${ures.statusCode} ${ures.statusMessage ?? ''}\r\n${headerLines(raw)}Connection: close\r\n\r\n`,
      );
      ures.pipe(socket);
    });
    upstream.once('timeout', () =>
      upstream.destroy(new TetherError('bad_gateway', `instance ${inst.name} did not answer the upgrade in time`)),
    );
    upstream.on('error', (err) => {
      if (socket.destroyed) return;
      sendSocketError(socket, err instanceof TetherError ? err : upstreamFailed(inst.name));
    });
    upstream.end();
  }
}

/** Reads a client socket until the upgrade is answered. */
interface EarlyReader {
  /** Stops reading; returns the bytes the client sent so far (the `head` first). */
  stop(): Buffer;
}

/**
 * Keeps reading the client socket while the upgrade waits (queue, start, the instance's 101): a socket
 * nobody reads never reports the client leaving. Bytes sent early are kept for the instance; the client
 * ending its side before the 101 closes the socket (which aborts the wait and the upstream request).
 */
function readEarly(socket: Duplex, head: Buffer): EarlyReader {
  const chunks: Buffer[] = head.length > 0 ? [head] : [];
  const onData = (c: Buffer) => chunks.push(c);
  const onEnd = () => socket.destroy();
  socket.on('data', onData);
  socket.once('end', onEnd);
  socket.resume();
  return {
    stop() {
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.pause();
      return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    },
  };
}
