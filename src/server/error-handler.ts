/**
 * @module
 * The one error handler of the memory server: `TetherError` -> its status and `{"error":{code,message}}`;
 * Fastify's own client errors (bad JSON, body too large, wrong media type) -> 400/413 with a clear
 * message; anything else -> 500 with an id to find the log line, never a stack trace. Node's own
 * refusals of a request it cannot parse (`clientErrorHandler`) get the same wire shape.
 */
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isTetherError, TetherError } from '../common/errors.ts';

/** Maps any thrown value to a `TetherError` a client may see. */
export function toTetherError(err: unknown, errorId: string): TetherError {
  if (isTetherError(err)) return err;
  const fe = err as Partial<FastifyError> & { type?: string };
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new TetherError('too_large', 'request body is larger than the limit of 1 MiB');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new TetherError('invalid_request', 'body: unsupported content type; send application/json', {
        field: 'body',
      });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new TetherError('invalid_request', 'body: must not be empty', { field: 'body' });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new TetherError('invalid_request', `body: ${fe.message ?? 'invalid'}`, { field: 'body' });
  }
  if (err instanceof SyntaxError || fe.statusCode === 400) {
    return new TetherError('invalid_request', 'body: malformed JSON', { field: 'body' });
  }
  if (fe.statusCode === 413) return new TetherError('too_large', 'request body is larger than the limit of 1 MiB');
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new TetherError('invalid_request', fe.message ?? 'bad request');
  }
  return new TetherError('internal', `internal error; quote id ${errorId} to the operator`);
}

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
