/**
 * @module
 * The one error registry of Tether: every wire error code, its HTTP status, and `TetherError`.
 * Servers turn a `TetherError` into `{"error":{"code","message"}}` with the status from `ERROR_STATUS`,
 * and anything else thrown into one with `toTetherError`. Imports nothing; used by every layer.
 */

/** Wire error code -> HTTP status, exactly as DESIGN.md lists them. */
export const ERROR_STATUS = Object.freeze({
  invalid_request: 400,
  unauthenticated: 401,
  key_expired: 401,
  key_revoked: 401,
  warm_pool: 401,
  namespace_mismatch: 403,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  lease_held: 409,
  lease_lost: 409,
  lease_not_held: 409,
  too_large: 413,
  rate_limited: 429,
  headers_too_large: 431,
  internal: 500,
  bad_gateway: 502,
  unavailable: 503,
} as const);

/** A wire error code. */
export type ErrorCode = keyof typeof ERROR_STATUS;

/** Extra facts an error may carry. */
export interface TetherErrorOptions {
  /** The request field at fault (for `invalid_request`), e.g. `statements[2].value`. */
  field?: string;
  /** Seconds the client should wait before retrying (429, 503). */
  retryAfter?: number;
  /** The underlying error; logged, never sent to a client. */
  cause?: unknown;
}

/** An error a client may see: a wire code, a message safe to show, and optional facts. */
export class TetherError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly field: string | undefined;
  readonly retryAfter: number | undefined;

  constructor(code: ErrorCode, message: string, options: TetherErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TetherError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.field = options.field;
    this.retryAfter = options.retryAfter;
  }

  /** The JSON body sent to clients. */
  toBody(): { error: { code: ErrorCode; message: string } } {
    return { error: { code: this.code, message: this.message } };
  }
}

/** 400 `invalid_request` naming the field: `invalidRequest('value', 'must be a number')`. */
export function invalidRequest(field: string, problem: string): TetherError {
  return new TetherError('invalid_request', `${field}: ${problem}`, { field });
}

/** 403 `namespace_mismatch` for a key that names a namespace it may not reach. */
export function namespaceMismatch(keyNamespace: string, requested: string): TetherError {
  return new TetherError(
    'namespace_mismatch',
    `this key is for namespace '${keyNamespace}' and may not reach '${requested}'`,
  );
}

/** 401 `unauthenticated` with the reason. */
export function unauthenticated(reason: string): TetherError {
  return new TetherError('unauthenticated', reason);
}

/** 403 `forbidden` with the reason. */
export function forbidden(reason: string): TetherError {
  return new TetherError('forbidden', reason);
}

/** 404 `not_found` naming what was not found. */
export function notFound(what: string): TetherError {
  return new TetherError('not_found', `${what} not found`);
}

/** 503 `unavailable` with a `Retry-After` in seconds. */
export function unavailable(reason: string, retryAfter = 1): TetherError {
  return new TetherError('unavailable', reason, { retryAfter });
}

/** True when `err` is a `TetherError` (also across module copies). */
export function isTetherError(err: unknown): err is TetherError {
  return err instanceof TetherError || (err instanceof Error && err.name === 'TetherError' && 'code' in err);
}

/**
 * Turns anything thrown into an error a client may see: the one conversion of the memory server and the
 * gateway.
 * - a `TetherError`: as it is (a failed Zod parse is one already: 400 naming the field);
 * - a request a body parser refused (Fastify's `FST_ERR_CTP_*` codes, a `SyntaxError`, any error carrying a
 *   4xx `statusCode`): 400 `invalid_request` naming `body`, or 413 `too_large`;
 * - anything else: 500 `internal` whose message is only `internal error; quote id <errorId> to the operator`,
 *   never the error's own message or stack (they may hold a secret; it stays the `cause`, which is never
 *   sent): log `err` with the same id.
 * @param errorId an id for the log line of an unknown error (e.g. `randomUUID()`)
 */
export function toTetherError(err: unknown, errorId: string): TetherError {
  if (isTetherError(err)) return err;
  return (
    parserRefusal(err) ??
    new TetherError('internal', `internal error; quote id ${errorId} to the operator`, { cause: err })
  );
}

/** The 400/413 of an error a request parser raised (see `toTetherError`), or null. */
function parserRefusal(err: unknown): TetherError | null {
  const e = (typeof err === 'object' && err !== null ? err : {}) as {
    code?: unknown;
    statusCode?: unknown;
    message?: unknown;
  };
  switch (e.code) {
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
      return new TetherError('invalid_request', `body: ${e.message ?? 'invalid'}`, { field: 'body' });
  }
  if (err instanceof SyntaxError || e.statusCode === 400) {
    return new TetherError('invalid_request', 'body: malformed JSON', { field: 'body' });
  }
  if (e.statusCode === 413) return new TetherError('too_large', 'request body is larger than the limit of 1 MiB');
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new TetherError('invalid_request', typeof e.message === 'string' ? e.message : 'bad request');
  }
  return null;
}
