/**
 * @module
 * Checks a `--redis-url` before anything connects: `redis://[user:pass@]host:port/db` (or `rediss://` for TLS).
 * Errors name the host and port and never the password. Pure; used by the CLI and redis-store.ts.
 */
import { credentialsEnd, rawCredentials } from '../../common/url-credentials.ts';

/** A checked Redis URL. */
export interface RedisTarget {
  host: string;
  port: number;
  db: number;
  tls: boolean;
  username?: string;
  password?: string;
  /** `host:port/db`, safe to log (no credentials). */
  display: string;
}

/**
 * Refuses credentials holding a raw '/', '?', '#' or '@' (common/url-credentials.ts), naming only what
 * follows them: `new URL()` reads such a password as the host's port, a path or a query (or fails),
 * and the errors below named those parts.
 */
function refuseRawCredentials(text: string): void {
  if (!rawCredentials(text)) return;
  const at = credentialsEnd(text);
  const host = /^(\[[^\]]*\]|[^:/?#]*)(?::([^/?#]*))?/.exec(text.slice(at + 1));
  throw new Error(
    `--redis-url: percent-encode '/', '?', '#' and '@' in the user name and password (host ${host?.[1] || '?'}, port ${host?.[2] || '6379'})`,
  );
}

/**
 * Parses and checks a Redis URL.
 * @throws {Error} naming what is wrong (and the host and port when known), never the password
 */
export function parseRedisUrl(text: string): RedisTarget {
  refuseRawCredentials(text);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // Name what can be read of host and port (never the credentials before '@').
    const m = /^[a-z]+:\/\/(?:[^@/]*@)?([^:/?#@]+)(?::([^/?#]*))?/i.exec(text);
    const where = m ? ` (host ${m[1]}, port ${m[2] ?? '6379'})` : '';
    throw new Error(`--redis-url: not a valid URL${where}; expected redis://[user:pass@]host:port/db`);
  }
  const where = `${url.hostname || '?'}:${url.port || '6379'}`;
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new Error(`--redis-url: the scheme must be redis:// or rediss:// (host ${where}), got '${url.protocol}'`);
  }
  if (!url.hostname) throw new Error('--redis-url: the host is missing (expected redis://host:port/db)');
  const port = url.port === '' ? 6379 : Number(url.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`--redis-url: port of ${url.hostname} must be 1-65535`);
  }
  const path = url.pathname.replace(/^\//, '');
  if (path !== '' && !/^\d{1,2}$/.test(path)) {
    throw new Error(`--redis-url: the database of ${where} must be a number (0-15 by default), got '/${path}'`);
  }
  if (url.search !== '' || url.hash !== '') {
    throw new Error(`--redis-url: options in the URL are not supported (host ${where})`);
  }
  const db = path === '' ? 0 : Number(path);
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port,
    db,
    tls: url.protocol === 'rediss:',
    username: url.username ? decodeCredential(url.username, 'user name', where) : undefined,
    password: url.password ? decodeCredential(url.password, 'password', where) : undefined,
    display: `${url.hostname}:${port}/${db}`,
  };
}

/**
 * Percent-decodes the user name or password of the URL. A stray `%` (`secret%zzpw`) makes decodeURIComponent
 * throw a bare `URI malformed`; this names the flag, host and port instead, and never the value itself.
 */
function decodeCredential(encoded: string, what: 'user name' | 'password', where: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    throw new Error(`--redis-url: the ${what} of ${where} is not valid percent-encoding (write a '%' in it as %25)`);
  }
}
