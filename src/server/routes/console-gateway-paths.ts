/**
 * @module
 * Which gateway admin calls the console's pass-through on the memory port may make: an allow-list of the
 * routes the console reads (and its two DELETE buttons), matched on the raw request target, before any
 * decoding. The memory port is the one port an isolated instance may reach, so nothing else of the admin API
 * (`/metrics`, `/`, a route added later) may be reachable through it. A dot segment (`..`, `.`), percent-encoding
 * (`%2e%2e`, `%2f`), a backslash or an empty segment is refused before matching: `new URL()` would resolve
 * them into another path. Pure; used by console.ts.
 */
import { invalidRequest, notFound, type TetherError } from '../../common/errors.ts';

/** `[method, raw path under /_tether/]` patterns the console uses; segments hold no `.`, `%` or `\\`. */
const ALLOWED: ReadonlyArray<{ method: 'GET' | 'DELETE'; path: RegExp }> = Object.freeze([
  { method: 'GET', path: /^\/_tether\/(?:services|sessions|instances)$/ },
  { method: 'GET', path: /^\/_tether\/instances\/[a-z0-9-]{1,63}\/logs$/ },
  { method: 'DELETE', path: /^\/_tether\/sessions\/[A-Za-z0-9_-]{12,43}$/ },
  { method: 'DELETE', path: /^\/_tether\/instances\/[a-z0-9-]{1,63}$/ },
]);

/** The query strings the console sends, exactly. */
const QUERIES: ReadonlyArray<RegExp> = Object.freeze([/^$/, /^reveal=keys$/, /^service=[a-z0-9-]{1,63}$/]);

/**
 * The admin path and query to request for a console call, checked.
 * @param method the request method
 * @param target the raw request target after `/console/gateway` (e.g. `/_tether/sessions?reveal=keys`)
 * @returns the target to append to the admin URL (unchanged), or the error to answer
 */
export function consoleGatewayTarget(method: string, target: string): string | TetherError {
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  const query = q < 0 ? '' : target.slice(q + 1);
  if (/[%\\]/.test(path) || /\/\.{1,2}(?:\/|$)/.test(path) || path.includes('//')) {
    return invalidRequest('path', 'dot segments, percent-encoding, backslashes and empty segments are refused');
  }
  if (!ALLOWED.some((a) => a.method === method && a.path.test(path)) || !QUERIES.some((r) => r.test(query))) {
    return notFound(`${method} ${path.slice(0, 80)} is not a gateway call of the console`);
  }
  return target;
}
