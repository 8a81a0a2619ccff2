/**
 * @module
 * Finds the session key of a request: the affinity cookie, else `X-Session-Key`, else a hash of
 * `Authorization` (with signed keys: only a key that verifies); and makes new keys, their `Set-Cookie` and
 * what their first request is forwarded with (`X-Session-Key`, and the Cookie header). Allocation-light: it runs on every proxied
 * request (proxy/exchange.ts, proxy/http-proxy.ts, proxy/ws-proxy.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { NewSessionForward } from './proxy/headers.ts';
import { forwardedHttps, TrustedProxies } from './proxy/trusted-proxies.ts';
import { SessionSigner } from './session-signer.ts';

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

/** How a gateway treats session keys (one per gateway, built at start). */
export interface SessionKeyPolicy {
  /** Issues every new key (signed, so a service may switch to signed-only keys without ending sessions). */
  signer: SessionSigner;
  /** Services without `tether.dev/signed-session-keys` accept only signed keys (`--signed-session-keys`). */
  signedByDefault: boolean;
  /** Every `Set-Cookie` gets `Secure` (`--secure-cookies`: TLS ends in front of the gateway). */
  secureCookies: boolean;
  /** Peers whose `X-Forwarded-Proto: https` makes a cookie `Secure`. */
  trusted: TrustedProxies;
}

/**
 * A policy; without options it issues keys signed with a random secret and accepts any key.
 * @param o.secret the session-signing secret; `signedByDefault`, `secureCookies`, `trustedProxies` as above
 */
export function sessionKeyPolicy(
  o: { secret?: string; signedByDefault?: boolean; secureCookies?: boolean; trustedProxies?: readonly string[] } = {},
): SessionKeyPolicy {
  return {
    signer: new SessionSigner(o.secret ?? randomBytes(32)),
    signedByDefault: o.signedByDefault ?? false,
    secureCookies: o.secureCookies ?? false,
    trusted: new TrustedProxies(o.trustedProxies),
  };
}

/** The session key of a request; `fresh` when the gateway made it (the client gets it with `Set-Cookie`). */
export interface ResolvedKey {
  key: string;
  fresh: boolean;
}

const SHARED: ResolvedKey = Object.freeze({ key: SHARED_KEY, fresh: false });

/**
 * The session key a request to a service uses: the shared key without affinity, else the one it carries,
 * else a new one. With signed keys (the service's annotation, else the policy's default) a carried key
 * counts only when it verifies: a forged, guessed or unsigned one starts a new session, and a hash of
 * `Authorization` is no session key (any client could send that value).
 * @param svc the service's affinity, cookie and signed-keys setting
 * @param cookie the Cookie header; `explicit` X-Session-Key; `authorization` the Authorization header
 */
export function resolveSessionKey(
  svc: { affinity: boolean; cookieName: string; signedSessionKeys: boolean | null },
  policy: SessionKeyPolicy,
  cookie: string | undefined,
  explicit: string | undefined,
  authorization: string | undefined,
): ResolvedKey {
  if (!svc.affinity) return SHARED;
  if (svc.signedSessionKeys ?? policy.signedByDefault) {
    const fromCookie = readCookie(cookie, svc.cookieName);
    if (fromCookie !== undefined && policy.signer.verify(fromCookie)) return { key: fromCookie, fresh: false };
    if (explicit && policy.signer.verify(explicit)) return { key: explicit, fresh: false };
  } else {
    const key = sessionKeyFrom(cookie, explicit, authorization, svc.cookieName);
    if (key !== undefined) return { key, fresh: false };
  }
  return { key: policy.signer.issue(), fresh: true };
}

/**
 * The `Set-Cookie` of a new session: `Secure` when the policy says always, or when a trusted proxy
 * says the client came over HTTPS.
 * @param peer the socket's remote address; `forwardedProto` the request's X-Forwarded-Proto
 */
export function newSessionCookie(
  policy: SessionKeyPolicy,
  cookieName: string,
  key: string,
  peer: string | undefined,
  forwardedProto: string | undefined,
): string {
  return sessionCookie(cookieName, key, policy.secureCookies || forwardedHttps(policy.trusted, peer, forwardedProto));
}

/** The `Set-Cookie` value that gives a client its new session key. */
export function sessionCookie(cookieName: string, key: string, secure = false): string {
  return `${cookieName}=${key}; Path=/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

/**
 * How a new session's first request goes to the app: with `X-Session-Key: <key>`, and the client's Cookie
 * header as sent (the seed's `Raw Cookie Header: app=11`), without any `cookieName` pair in it (a forged,
 * unsigned or empty key the gateway did not route by: the app must not take it for the session). With the
 * service's `tether.dev/add-session-cookie`, `cookieName=key` is added to the Cookie header too.
 * @param svc the service's cookie name and `addSessionCookie`
 * @param header the client's Cookie header
 */
export function newSessionForward(
  svc: { cookieName: string; addSessionCookie: boolean },
  header: string | undefined,
  key: string,
): NewSessionForward {
  if (svc.addSessionCookie) return { cookie: withSessionCookie(header, svc.cookieName, key), sessionKey: key };
  if (header === undefined || !header.includes(svc.cookieName)) return { cookie: undefined, sessionKey: key };
  const kept = cookiesWithout(header, svc.cookieName);
  return { cookie: kept.length === countPairs(header) ? undefined : kept.join('; '), sessionKey: key };
}

/**
 * The Cookie header with `cookieName=key` (and no other `cookieName` pair): a new session's first request
 * with `tether.dev/add-session-cookie`, so the app sees the session from that request on.
 */
export function withSessionCookie(header: string | undefined, cookieName: string, key: string): string {
  const kept = cookiesWithout(header ?? '', cookieName);
  kept.push(`${cookieName}=${key}`);
  return kept.join('; ');
}

/** The trimmed pairs of a Cookie header other than those named `cookieName`. */
function cookiesWithout(header: string, cookieName: string): string[] {
  const kept: string[] = [];
  for (const pair of header.split(';')) {
    const p = pair.trim();
    if (!p) continue;
    const eq = p.indexOf('=');
    if ((eq < 0 ? p : p.slice(0, eq).trimEnd()) !== cookieName) kept.push(p);
  }
  return kept;
}

function countPairs(header: string): number {
  let n = 0;
  for (const pair of header.split(';')) if (pair.trim()) n++;
  return n;
}
