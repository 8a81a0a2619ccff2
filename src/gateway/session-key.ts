/**
 * @module
 * Finds the session key of a request: the affinity cookie, else `X-Session-Key`, else a hash of
 * `Authorization`; and makes new keys with their `Set-Cookie`. Pure and allocation-light: it runs on
 * every proxied request (proxy/http1-connection.ts, proxy/http-proxy.ts, proxy/ws-proxy.ts).
 */
import { createHash, randomBytes } from 'node:crypto';

/** The key used for every request of a service without session affinity. */
export const SHARED_KEY = '-';

/**
 * The value of cookie `name` in a Cookie header, or undefined.
 * @param header the Cookie header (`a=1; b=2`)
 */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  const len = header.length;
  let at = 0;
  while (at < len) {
    while (at < len && isCookieSpace(header.charCodeAt(at))) at++;
    let end = header.indexOf(';', at);
    if (end < 0) end = len;
    const eq = header.indexOf('=', at);
    // A pair without '=' before its ';' (e.g. `flag`) has no value: skip just that pair.
    if (eq >= 0 && eq < end) {
      let nameEnd = eq;
      while (nameEnd > at && isCookieSpace(header.charCodeAt(nameEnd - 1))) nameEnd--;
      if (nameEnd - at === name.length && header.startsWith(name, at)) {
        let v = header.slice(eq + 1, end).trim();
        if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
        return v.length > 0 ? v : undefined;
      }
    }
    at = end + 1;
  }
  return undefined;
}

/** Space or horizontal tab. */
function isCookieSpace(c: number): boolean {
  return c === 32 || c === 9;
}

/**
 * The session key a request carries (affinity cookie, X-Session-Key, hash of Authorization), or undefined.
 * @param cookie the Cookie header
 * @param explicit the X-Session-Key header
 * @param authorization the Authorization header
 * @param cookieName the service's affinity cookie
 */
export function sessionKeyFrom(
  cookie: string | undefined,
  explicit: string | undefined,
  authorization: string | undefined,
  cookieName: string,
): string | undefined {
  const fromCookie = readCookie(cookie, cookieName);
  if (fromCookie !== undefined) return fromCookie;
  if (explicit) return explicit;
  if (authorization) return `auth-${createHash('sha256').update(authorization).digest('hex').slice(0, 32)}`;
  return undefined;
}

/** The session key of a request and, for a new session, the `Set-Cookie` to return. */
export interface ResolvedKey {
  key: string;
  setCookie?: string;
}

/**
 * The session key a request to a service uses: the shared key without affinity, else the one it carries,
 * else a new one with its `Set-Cookie`.
 * @param affinity the service's session affinity, and its cookie
 * @param cookie the Cookie header; `explicit` X-Session-Key; `authorization` the Authorization header
 */
export function resolveSessionKey(
  affinity: { affinity: boolean; cookieName: string },
  cookie: string | undefined,
  explicit: string | undefined,
  authorization: string | undefined,
): ResolvedKey {
  if (!affinity.affinity) return { key: SHARED_KEY };
  const key = sessionKeyFrom(cookie, explicit, authorization, affinity.cookieName);
  if (key !== undefined) return { key };
  const fresh = newSessionKey();
  return { key: fresh, setCookie: sessionCookie(affinity.cookieName, fresh) };
}

/** A new random session key (128 bits, URL- and cookie-safe). */
export function newSessionKey(): string {
  return randomBytes(16).toString('base64url');
}

/** The `Set-Cookie` value that gives a client its new session key. */
export function sessionCookie(cookieName: string, key: string): string {
  return `${cookieName}=${key}; Path=/; HttpOnly; SameSite=Lax`;
}
