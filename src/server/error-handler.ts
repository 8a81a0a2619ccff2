/**
 * @module
 * The one error handler of the memory server: `TetherError` -> its status and `{"error":{code,message}}`;
 * Fastify's own client errors (bad JSON, body too large, wrong media type) -> 400/413 with a clear
 * message; anything else -> 500 with an id to find the log line, never a stack trace (`toTetherError`,
 * common/errors.ts, shared with the gateway). Node's own
 * refusals of a request it cannot parse (`clientErrorHandler`) get the same wire shape.
 */
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { TetherError, toTetherError } from '../common/errors.ts';

/** Sends `err` as the wire error. */
export function sendError(reply: FastifyReply, err: TetherError): FastifyReply {
  if (err.retryAfter !== undefined) reply.header('retry-after', String(Math.max(1, Math.ceil(err.retryAfter))));
  return reply.status(err.status).type('application/json').send(err.toBody());
}

/** Installs the error and not-found handlers on `app`. */
export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler(function tetherErrorHandler(err, req: FastifyRequest, reply) {
    const errorId = randomUUID();
    const te = toTetherError(err, errorId);
    if (te.status >= 500 && te.code === 'internal') {
      req.log.error({ err, errorId }, 'request failed');
    } else if (te.status >= 500) {
      req.log.warn({ code: te.code, msg: te.message, cause: te.cause }, 'request unavailable');
    } else {
      req.log.info({ code: te.code, field: te.field }, 'request refused');
    }
    return sendError(reply, te);
  });
  app.setNotFoundHandler(function notFoundHandler(req, reply) {
    return sendError(reply, new TetherError('not_found', `no route ${req.method} ${req.url.split('?')[0]}`));
  });
}

/**
 * Answers a request Node's HTTP parser refused before Fastify saw it (both Content-Length and
 * Transfer-Encoding, a malformed head, headers too large, a head that came too slowly) with the wire
 * error shape, then closes the connection: Fastify's default answers `{"error":"Bad Request"}`.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  let te: TetherError;
  let status: string;
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    te = new TetherError('headers_too_large', 'request headers are larger than the limit');
    status = '431 Request Header Fields Too Large';
  } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    te = new TetherError('invalid_request', 'request: the request head or body did not arrive in time', {
      field: 'request',
    });
    status = '408 Request Timeout';
  } else {
    const why =
      err.code === 'HPE_INVALID_TRANSFER_ENCODING' || err.code === 'HPE_UNEXPECTED_CONTENT_LENGTH'
        ? 'has both Content-Length and Transfer-Encoding'
        : 'is not valid HTTP/1.1';
    te = new TetherError('invalid_request', `request: ${why}`, { field: 'request' });
    status = '400 Bad Request';
  }
  if (socket.writable) {
    const body = JSON.stringify(te.toBody());
    socket.write(
      `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
