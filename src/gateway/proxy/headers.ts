/**
 * @module
 * Header passes of the proxy: strip hop-by-hop headers (a frozen set, plus any the Connection header
 * names), append `X-Forwarded-For/Proto/Host`, give a new session's first request its `X-Session-Key`, and
 * add the new session's `Set-Cookie` to a response. Works on raw `[name, value, …]` arrays so the instance
 * sees the client's headers (Cookie included) unchanged; shared by the raw HTTP/1.1 path (http1-connection.ts)
 * and the node:http slow path.
 */
import type { IncomingMessage } from 'node:http';

/** Headers that belong to one connection, never forwarded (RFC 9110 7.6.1). */
export const HOP_BY_HOP: ReadonlySet<string> = Object.freeze(
  new Set([
    'connection',
    'keep-alive',
    'proxy-authenticate',
    'proxy-authorization',
    'proxy-connection',
    'te',
    'trailer',
    'transfer-encoding',
    'upgrade',
  ]),
);

/**
 * Names a Connection header may not remove (RFC 9110 7.6.1 lets a sender list any field; these are
 * end-to-end, and a client could otherwise make the gateway and the instance see different requests):
 * - `content-length`, `transfer-encoding`: dropping a client's framing while its body is still forwarded
 *   would let the body reach the instance as requests of its own (request smuggling); dropping an
 *   instance's would leave its body unframed;
 * - `host`: the gateway routes by it, the instance must see the same one;
 * - `cookie`, `authorization`, `x-session-key`: the gateway finds the session in them, so the app must see
 *   the same session the gateway routed (`Connection: cookie` used to drop the Cookie header).
 */
const NEVER_LISTED: ReadonlySet<string> = Object.freeze(
  new Set(['content-length', 'transfer-encoding', 'host', 'cookie', 'authorization', 'x-session-key']),
);

/** Extra header names the Connection header lists (beyond keep-alive/close/upgrade), lower case. */
function connectionListed(value: string | undefined): Set<string> | null {
  if (!value) return null;
  let out: Set<string> | null = null;
  for (const token of value.split(',')) {
    const t = token.trim().toLowerCase();
    if (!t || t === 'keep-alive' || t === 'close' || t === 'upgrade' || NEVER_LISTED.has(t)) continue;
    out ??= new Set();
    out.add(t);
  }
  return out;
}

/** The client side of a forwarded request, for `X-Forwarded-*`. */
export interface ForwardedFrom {
  /** The client's address (`X-Forwarded-For`). */
  ip: string;
  /** `http` or `https` (`X-Forwarded-Proto`). */
  proto: string;
  /** The request's Host header (`X-Forwarded-Host`), or undefined. */
  host: string | undefined;
  /** The request's Connection header (it may list more hop-by-hop names), or undefined. */
  connection: string | undefined;
  /** Set for a new session's first request (session-key.ts `newSessionForward`). */
  newSession?: NewSessionForward;
}

/** What a new session's first request is forwarded with. */
export interface NewSessionForward {
  /** The Cookie header to send instead of the client's ('' = none); undefined keeps the client's as sent. */
  cookie: string | undefined;
  /** Sent as `X-Session-Key` in place of any the client sent: the app learns its new key from it. */
  sessionKey: string;
}

/**
 * The headers to send to the instance, as a raw `[name, value, …]` array: hop-by-hop and Connection-listed
 * headers dropped, `X-Forwarded-*` appended (comma-joined to any the client sent); for a new session,
 * `X-Session-Key` (and, when replaced, Cookie) set as `from.newSession` says.
 * @param raw the client's raw headers
 * @param from the client side (address, protocol, Host, Connection)
 * @param upgrade the Upgrade protocol to keep with `Connection: Upgrade` (WebSocket), or null
 */
export function forwardHeaders(raw: readonly string[], from: ForwardedFrom, upgrade: string | null = null): string[] {
  const listed = connectionListed(from.connection);
  const out: string[] = [];
  let xff: string | undefined;
  let xfp: string | undefined;
  let xfh: string | undefined;
  const fresh = from.newSession;
  const newCookie = fresh?.cookie;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    const value = raw[i + 1] as string;
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || listed?.has(lower)) continue;
    if (fresh !== undefined && (lower === 'x-session-key' || (newCookie !== undefined && lower === 'cookie'))) {
      continue; // replaced below
    }
    if (lower.startsWith('x-forwarded-')) {
      if (lower === 'x-forwarded-for') xff = xff === undefined ? value : `${xff}, ${value}`;
      else if (lower === 'x-forwarded-proto') xfp = xfp === undefined ? value : `${xfp}, ${value}`;
      else if (lower === 'x-forwarded-host') xfh = xfh === undefined ? value : `${xfh}, ${value}`;
      else out.push(name, value);
      continue;
    }
    out.push(name, value);
  }
  const { ip, proto } = from;
  const host = from.host ?? '';
  if (newCookie) out.push('Cookie', newCookie);
  if (fresh !== undefined) out.push('X-Session-Key', fresh.sessionKey);
  out.push('X-Forwarded-For', xff === undefined ? ip : `${xff}, ${ip}`);
  out.push('X-Forwarded-Proto', xfp === undefined ? proto : `${xfp}, ${proto}`);
  out.push('X-Forwarded-Host', xfh === undefined ? host : `${xfh}, ${host}`);
  if (upgrade !== null) out.push('Connection', 'Upgrade', 'Upgrade', upgrade);
  return out;
}

/**
 * `forwardHeaders` for a node:http request (the slow path and WebSocket upgrades).
 * @param req the client request
 * @param upgrade keep `Connection: Upgrade` and `Upgrade` (WebSocket)
 * @param newSession what a new session's first request carries, or undefined
 */
export function requestHeaders(req: IncomingMessage, upgrade: boolean, newSession?: NewSessionForward): string[] {
  const from: ForwardedFrom = {
    ip: req.socket.remoteAddress ?? '',
    proto: (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http',
    host: req.headers.host,
    connection: req.headers.connection,
    newSession,
  };
  return forwardHeaders(req.rawHeaders, from, upgrade ? (req.headers.upgrade ?? 'websocket') : null);
}

/**
 * The headers to send back to the client, as a raw array.
 * @param raw the instance's `rawHeaders`
 * @param setCookie a `Set-Cookie` value to add (new session), or undefined
 * @param upgrade keep `Connection`/`Upgrade` (a 101 answer)
 */
export function responseHeaders(raw: readonly string[], setCookie: string | undefined, upgrade = false): string[] {
  const out: string[] = [];
  let listed: Set<string> | null = null;
  for (let i = 0; i < raw.length; i += 2) {
    if ((raw[i] as string).toLowerCase() === 'connection') listed = connectionListed(raw[i + 1]);
  }
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    const lower = name.toLowerCase();
    if (upgrade && (lower === 'connection' || lower === 'upgrade')) out.push(name, raw[i + 1] as string);
    else if (!HOP_BY_HOP.has(lower) && !listed?.has(lower)) out.push(name, raw[i + 1] as string);
  }
  if (setCookie !== undefined) out.push('Set-Cookie', setCookie);
  return out;
}

/** A raw header array as HTTP/1.1 header lines (`Name: value\r\n` each, no final blank line). */
export function headerLines(raw: readonly string[]): string {
  let text = '';
  for (let i = 0; i < raw.length; i += 2) text += `${raw[i]}: ${raw[i + 1]}\r\n`;
  return text;
}

/** The request headers the raw HTTP/1.1 path acts on, read in one pass over the raw array. */
export interface RequestHeaderScan {
  /** The first Host header. */
  host: string | undefined;
  /** How many Host header lines there are (a request needs exactly one: see `hostFieldProblem`). */
  hosts: number;
  /** Cookie headers, joined with `; ` when sent several times. */
  cookie: string | undefined;
  sessionKey: string | undefined;
  authorization: string | undefined;
  connection: string | undefined;
  /** The request has a Content-Length. */
  length: boolean;
  /** The request has a Transfer-Encoding (llhttp accepts only chunked last: the body is chunked). */
  chunked: boolean;
  /** Its value (several joined with `, `), e.g. `gzip, chunked`: the codings before chunked go on. */
  transferEncoding: string | undefined;
  /** The request has an Expect header (handled by the node:http slow path). */
  expect: boolean;
  /** X-Forwarded-Proto (several joined with `, `): believed from a trusted proxy only. */
  forwardedProto: string | undefined;
  /** X-Forwarded-For (several joined with `, `): believed from a trusted proxy only. */
  forwardedFor: string | undefined;
}

/** Reads the headers the proxy acts on from a raw request header array (first Host wins, as in node:http). */
export function scanRequestHeaders(raw: readonly string[]): RequestHeaderScan {
  const out: RequestHeaderScan = {
    host: undefined,
    hosts: 0,
    cookie: undefined,
    sessionKey: undefined,
    authorization: undefined,
    connection: undefined,
    length: false,
    chunked: false,
    transferEncoding: undefined,
    expect: false,
    forwardedProto: undefined,
    forwardedFor: undefined,
  };
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    // Length first: most headers are dismissed without lower-casing their name.
    switch (name.length) {
      case 4:
        if (name.toLowerCase() === 'host') {
          out.hosts++;
          out.host ??= raw[i + 1];
        }
        break;
      case 6:
        if (name.toLowerCase() === 'cookie') {
          const v = raw[i + 1] as string;
          out.cookie = out.cookie === undefined ? v : `${out.cookie}; ${v}`;
        } else if (name.toLowerCase() === 'expect') out.expect = true;
        break;
      case 10:
        if (name.toLowerCase() === 'connection') out.connection = raw[i + 1];
        break;
      case 13:
        if (name.toLowerCase() === 'authorization') out.authorization = raw[i + 1];
        else if (name.toLowerCase() === 'x-session-key') out.sessionKey = raw[i + 1];
        break;
      case 14:
        if (name.toLowerCase() === 'content-length') out.length = true;
        break;
      case 15:
        if (name.toLowerCase() === 'x-forwarded-for') {
          const v = raw[i + 1] as string;
          out.forwardedFor = out.forwardedFor === undefined ? v : `${out.forwardedFor}, ${v}`;
        }
        break;
      case 17:
        if (name.toLowerCase() === 'transfer-encoding') {
          const v = raw[i + 1] as string;
          out.chunked = true;
          out.transferEncoding = out.transferEncoding === undefined ? v : `${out.transferEncoding}, ${v}`;
        } else if (name.toLowerCase() === 'x-forwarded-proto') {
          const v = raw[i + 1] as string;
          out.forwardedProto = out.forwardedProto === undefined ? v : `${out.forwardedProto}, ${v}`;
        }
        break;
    }
  }
  return out;
}

/**
 * The transfer codings of a raw header array other than a final `chunked` (e.g. `gzip` of
 * `Transfer-Encoding: gzip, chunked`), or '' when there are none.
 */
export function codingsBeforeChunked(raw: readonly string[]): string {
  let te = '';
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length === 17 && name.toLowerCase() === 'transfer-encoding')
      te = te ? `${te}, ${raw[i + 1]}` : (raw[i + 1] as string);
  }
  return te.replace(/(?:^|,)[\t ]*chunked[\t ]*$/i, '').trim();
}

/** True when the raw array holds header `lower` (a lower-case name). */
export function hasHeader(raw: readonly string[], lower: string): boolean {
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length === lower.length && name.toLowerCase() === lower) return true;
  }
  return false;
}
