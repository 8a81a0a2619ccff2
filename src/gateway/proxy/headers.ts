/**
 * @module
 * Header passes of the proxy: strip hop-by-hop headers (a frozen set, plus any the Connection header
 * names), append `X-Forwarded-For/Proto/Host`, and add the new session's `Set-Cookie` to a response.
 * Works on raw header arrays so the instance sees the client's headers (Cookie included) unchanged.
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

/** Extra header names the Connection header lists (beyond keep-alive/close/upgrade), lower case. */
function connectionListed(value: string | undefined): Set<string> | null {
  if (!value) return null;
  let out: Set<string> | null = null;
  for (const token of value.split(',')) {
    const t = token.trim().toLowerCase();
    if (!t || t === 'keep-alive' || t === 'close' || t === 'upgrade') continue;
    out ??= new Set();
    out.add(t);
  }
  return out;
}

/**
 * The headers to send to the instance, as a raw `[name, value, …]` array.
 * @param req the client request
 * @param upgrade keep `Connection: Upgrade` and `Upgrade` (WebSocket)
 */
export function requestHeaders(req: IncomingMessage, upgrade: boolean): string[] {
  const raw = req.rawHeaders;
  const listed = connectionListed(req.headers.connection);
  const out: string[] = [];
  let xff: string | undefined;
  let xfp: string | undefined;
  let xfh: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    const value = raw[i + 1] as string;
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || listed?.has(lower)) continue;
    if (lower.startsWith('x-forwarded-')) {
      if (lower === 'x-forwarded-for') xff = xff === undefined ? value : `${xff}, ${value}`;
      else if (lower === 'x-forwarded-proto') xfp = xfp === undefined ? value : `${xfp}, ${value}`;
      else if (lower === 'x-forwarded-host') xfh = xfh === undefined ? value : `${xfh}, ${value}`;
      else out.push(name, value);
      continue;
    }
    out.push(name, value);
  }
  const ip = req.socket.remoteAddress ?? '';
  const proto = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  const host = req.headers.host ?? '';
  out.push('X-Forwarded-For', xff === undefined ? ip : `${xff}, ${ip}`);
  out.push('X-Forwarded-Proto', xfp === undefined ? proto : `${xfp}, ${proto}`);
  out.push('X-Forwarded-Host', xfh === undefined ? host : `${xfh}, ${host}`);
  if (upgrade) out.push('Connection', 'Upgrade', 'Upgrade', req.headers.upgrade ?? 'websocket');
  return out;
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
