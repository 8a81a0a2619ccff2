/**
 * @module
 * Error answers of the gateway: JSON `{"error":{"code","message"}}` with the status of the code and
 * `Retry-After` when set, on an HTTP response or on a raw socket (failed WebSocket upgrade). Anything
 * but a `TetherError` is a 500 with an id, logged with it (`toTetherError`); never a stack trace.
 * Used by the proxy and the admin server.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { invalidRequest, isTetherError, TetherError, toTetherError } from '../../common/errors.ts';
import type { Logger } from '../../common/log.ts';

/**
 * `err` as a client may see it (`toTetherError`): an unknown error becomes 500 `internal` naming a fresh
 * id, and is logged on `log` with that id.
 */
export function clientSafeError(err: unknown, log: Logger | undefined): TetherError {
  if (isTetherError(err)) return err; // the usual case: no id to make
  const errorId = randomUUID();
  const e = toTetherError(err, errorId);
  if (e.code === 'internal') log?.error({ err, errorId }, 'gateway request failed');
  return e;
}

/**
 * Sends `err` as JSON on `res` (or just ends it when headers already went out).
 * @param log where an unknown error is logged (see `clientSafeError`)
 */
export function sendError(res: ServerResponse, err: unknown, log?: Logger): void {
  const e = clientSafeError(err, log);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify(e.toBody());
  const headers: Record<string, string | number> = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  };
  if (e.retryAfter !== undefined) headers['retry-after'] = e.retryAfter;
  res.writeHead(e.status, headers);
  res.end(body);
}

/**
 * `err` as a whole HTTP/1.1 JSON response (head and body).
 * @param close add `Connection: close`
 */
export function errorResponse(err: TetherError, close: boolean): string {
  const body = JSON.stringify(err.toBody());
  const retry = err.retryAfter !== undefined ? `Retry-After: ${err.retryAfter}\r\n` : '';
  return (
    `HTTP/1.1 ${err.status} ${err.code}\r\nContent-Type: application/json; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n${retry}${close ? 'Connection: close\r\n' : ''}\r\n${body}`
  );
}

/** Writes `err` as a whole HTTP/1.1 response on a raw socket, then closes it. */
export function sendSocketError(socket: Duplex, err: TetherError): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(errorResponse(err, true));
}

/**
 * 400 for a request without exactly one Host header, else null (RFC 9112 section 3.2: none in an HTTP/1.1
 * request, several in any). With two, the router and the instance could each read a different one.
 * @param hosts how many Host header lines the request has
 */
export function hostFieldProblem(hosts: number, http11: boolean): TetherError | null {
  if (hosts > 1) return invalidRequest('host', 'a request may have one Host header, not several');
  if (hosts === 0 && http11) return invalidRequest('host', 'an HTTP/1.1 request needs a Host header');
  return null;
}

/** 404 naming the unknown host and the known ones. */
export function unknownHost(host: string | undefined, known: readonly string[]): TetherError {
  return new TetherError(
    'not_found',
    `no service for host '${host ?? ''}'; known hosts: ${known.length > 0 ? known.join(', ') : '(none)'}`,
  );
}
