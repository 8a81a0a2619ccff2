/**
 * @module
 * The one error registry of Tether: every wire error code, its HTTP status, and `TetherError`.
 * Servers turn a `TetherError` into `{"error":{"code","message"}}` with the status from `ERROR_STATUS`.
 * Imports nothing; used by every layer.
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
