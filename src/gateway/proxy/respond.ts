/**
 * @module
 * Error answers of the gateway: JSON `{"error":{"code","message"}}` with the status of the code and
 * `Retry-After` when set, on an HTTP response or on a raw socket (failed WebSocket upgrade).
 * Never a stack trace. Used by the proxy and the admin server.
 */
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { invalidRequest, isTetherError, TetherError } from '../../common/errors.ts';

/** Turns anything thrown into a client-safe TetherError (unknown -> 500 `internal`). */
export function toTetherError(err: unknown): TetherError {
  return isTetherError(err) ? err : new TetherError('internal', 'internal error', { cause: err });
}

/** Sends `err` as JSON on `res` (or just ends it when headers already went out). */
export function sendError(res: ServerResponse, err: unknown): void {
  const e = toTetherError(err);
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
export function errorResponse(err: unknown, close: boolean): string {
  const e = toTetherError(err);
  const body = JSON.stringify(e.toBody());
  const retry = e.retryAfter !== undefined ? `Retry-After: ${e.retryAfter}\r\n` : '';
  return (
    `HTTP/1.1 ${e.status} ${e.code}\r\nContent-Type: application/json; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n${retry}${close ? 'Connection: close\r\n' : ''}\r\n${body}`
  );
}

/** Writes `err` as a whole HTTP/1.1 response on a raw socket, then closes it. */
export function sendSocketError(socket: Duplex, err: unknown): void {
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
