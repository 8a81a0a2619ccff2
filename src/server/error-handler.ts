/**
 * @module
 * The one error handler of the memory server: `TetherError` -> its status and `{"error":{code,message}}`;
 * Fastify's own client errors (bad JSON, body too large, wrong media type) -> 400/413 with a clear
 * message; anything else -> 500 with an id to find the log line, never a stack trace.
 */
import { randomUUID } from 'node:crypto';
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
