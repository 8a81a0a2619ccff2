/**
 * @module
 * One error type for a failed call to the Kubernetes API server, with the failure sorted into a
 * reason the caller can act on (not found, forbidden, server error, unreachable, timeout).
 * Built by `kube/client.ts`; `auth/exchange/` turns it into a `TetherError`. No HTTP status mapping here.
 */

/** Why a call to the API server failed. */
export type KubeFailure =
  | 'not_found' // 404
  | 'forbidden' // 403: our RBAC is missing
  | 'unauthorized' // 401: our own credentials were refused
  | 'conflict' // 409: already exists, or a stale resourceVersion
  | 'server_error' // 5xx or 429
  | 'bad_response' // other 4xx or a body we could not read
  | 'unreachable' // connection refused, DNS, TLS
  | 'timeout'; // no answer within the request timeout

/** A failed API-server call: what was asked, why it failed, and the HTTP status when there was one. */
export class KubeRequestError extends Error {
  readonly failure: KubeFailure;
  /** HTTP status, when the server answered. */
  readonly status: number | undefined;
  /** Seconds from a `Retry-After` header, when the server sent one. */
  readonly retryAfter: number | undefined;
  /** What was asked, e.g. `get pods agents/tether-agents-x7k2q`. */
  readonly what: string;

  constructor(
    what: string,
    failure: KubeFailure,
    options: { status?: number; retryAfter?: number; cause?: unknown } = {},
  ) {
    const status = options.status === undefined ? '' : ` (HTTP ${options.status})`;
    super(`${what}: ${failure}${status}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'KubeRequestError';
    this.failure = failure;
    this.status = options.status;
    this.retryAfter = options.retryAfter;
    this.what = what;
  }
}

/** Sort an HTTP status from the API server into a failure. */
export function failureOfStatus(status: number): KubeFailure {
  if (status === 404) return 'not_found';
  if (status === 403) return 'forbidden';
  if (status === 401) return 'unauthorized';
  if (status === 409) return 'conflict';
  if (status === 429 || status >= 500) return 'server_error';
  return 'bad_response';
}

/**
 * Turn anything a client-node call threw into a `KubeRequestError`.
 * @param what what was asked, for the message
 * @param err the thrown value (client-node `ApiException`, node-fetch `FetchError`, `AbortError`, ...)
 * @param timedOut true when our own timeout aborted the call
 */
export function toKubeRequestError(what: string, err: unknown, timedOut: boolean): KubeRequestError {
  if (err instanceof KubeRequestError) return err;
  if (timedOut) return new KubeRequestError(what, 'timeout', { cause: err });
  const e = err as { code?: unknown; name?: unknown; headers?: Record<string, string> } | null;
  if (e && typeof e.code === 'number' && e.code >= 100 && e.code < 600) {
    const header = e.headers?.['retry-after'];
    const retryAfter = header !== undefined && /^\d+$/.test(header) ? Number(header) : undefined;
    return new KubeRequestError(what, failureOfStatus(e.code), { status: e.code, retryAfter, cause: err });
  }
  if (e && e.name === 'AbortError') return new KubeRequestError(what, 'timeout', { cause: err });
  return new KubeRequestError(what, 'unreachable', { cause: err });
}
