/**
 * @module
 * WebSocket (and any HTTP/1.1 Upgrade) pass-through: route and place like a plain request, send the
 * upgrade to the instance, relay its 101 and then pipe bytes both ways. The session counts the
 * connection in flight (activity) until both sides close. Created by gateway.ts for the `upgrade` event.
 */
import { type ClientRequest, type IncomingMessage, request } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { TetherError } from '../../common/errors.ts';
import type { Router } from '../router.ts';
import type { Scheduler } from '../scheduler.ts';
import type { SessionEntry } from '../state.ts';
import { requestHeaders, responseHeaders } from './headers.ts';
import { resolveSessionKey, upstreamFailed } from './http-proxy.ts';
import { sendSocketError, unknownHost } from './respond.ts';

/** Options of `createUpgradeProxy`. */
export interface UpgradeProxyOptions {
  router: Router;
  scheduler: Scheduler;
}

/** Creates the `upgrade` listener of the public server. */
export function createUpgradeProxy(
  o: UpgradeProxyOptions,
): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  const { router, scheduler } = o;

  function forward(req: IncomingMessage, socket: Duplex, head: Buffer, s: SessionEntry, setCookie?: string): void {
    const inst = s.instance;
    let released = false;
    const release = () => {
      if (!released) {
        released = true;
        scheduler.release(s);
      }
    };
    socket.once('close', release);
    socket.on('error', () => socket.destroy());
    (socket as Socket).setNoDelay?.(true);
    let upstream: ClientRequest;
    try {
      upstream = request({
        host: inst.host,
        port: inst.port,
        method: req.method,
        path: req.url,
        headers: requestHeaders(req, true) as unknown as Record<string, string>,
        agent: false,
      });
    } catch {
      sendSocketError(socket, new TetherError('invalid_request', 'the request cannot be forwarded as sent'));
      return;
    }
    upstream.once('upgrade', (ures, usocket, uhead) => {
      usocket.on('error', () => socket.destroy());
      socket.on('error', () => usocket.destroy());
      usocket.once('close', () => socket.destroy());
      socket.once('close', () => usocket.destroy());
      usocket.setNoDelay(true);
      const raw = responseHeaders(ures.rawHeaders, setCookie, true);
      let headText = `HTTP/1.1 ${ures.statusCode} ${ures.statusMessage ?? 'Switching Protocols'}\r\n`;
      for (let i = 0; i < raw.length; i += 2) headText += `${raw[i]}: ${raw[i + 1]}\r\n`;
      socket.write(`${headText}\r\n`);
      if (uhead.length > 0) socket.write(uhead);
      if (head.length > 0) usocket.write(head);
      usocket.pipe(socket);
      socket.pipe(usocket);
    });
    upstream.once('response', (ures) => {
      // The instance refused the upgrade: relay its answer as is.
      const raw = responseHeaders(ures.rawHeaders, setCookie);
      let headText = `HTTP/1.1 ${ures.statusCode} ${ures.statusMessage ?? ''}\r\n`;
      for (let i = 0; i < raw.length; i += 2) headText += `${raw[i]}: ${raw[i + 1]}\r\n`;
      socket.write(`${headText}Connection: close\r\n\r\n`);
      ures.pipe(socket);
    });
    upstream.on('error', () => sendSocketError(socket, upstreamFailed(inst.name)));
    upstream.end();
  }

  return function proxyUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const svc = router.match(req.headers.host);
    if (svc === undefined) {
      sendSocketError(socket, unknownHost(req.headers.host, router.knownHosts));
      return;
    }
    const { key, setCookie } = resolveSessionKey(req, svc);
    const s = scheduler.route(svc, key);
    if (s !== undefined) {
      forward(req, socket, head, s, setCookie);
      return;
    }
    const gone = new AbortController();
    const onClose = () => gone.abort();
    socket.once('close', onClose);
    socket.on('error', () => socket.destroy());
    scheduler.acquire(svc, key, gone.signal).then(
      (placed) => {
        socket.off('close', onClose);
        if (gone.signal.aborted) scheduler.release(placed);
        else forward(req, socket, head, placed, setCookie);
      },
      (err: unknown) => {
        socket.off('close', onClose);
        if (!gone.signal.aborted) sendSocketError(socket, err instanceof TetherError ? err : upstreamFailed('?'));
      },
    );
  };
}
