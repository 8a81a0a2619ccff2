/**
 * @module
 * How the PostgreSQL store connects: a `pg` pool with timeouts (so a database that is down or
 * unreachable answers within a bounded time), bigint columns read as numbers, URLs printed with the
 * password masked, and connection failures turned into 503 `unavailable` for clients. The password
 * never appears in a message made here.
 */
import pg from 'pg';
import { TetherError, unavailable } from '../../common/errors.ts';
import { credentialsEnd } from '../../common/url-credentials.ts';

/** Connection options of the store. */
export interface PostgresConnectionOptions {
  /** `postgres://user:pass@host:port/db`. */
  url: string;
  /** Connections in the pool. @default 10 */
  poolSize?: number;
  /** Wait for a connection (new or from the pool), ms. @default 2000 */
  connectTimeoutMs?: number;
  /** Longest a query may take before the client gives up on it, ms. @default 5000 */
  queryTimeoutMs?: number;
}

/** Types with bigint (int8, e.g. epoch ms and seq) parsed as JS numbers: every value we store fits 2^53. */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === pg.types.builtins.INT8) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

/**
 * `url` with its password replaced by `***` (for logs and errors): everything between `scheme://user:`
 * and the last '@', and any `password=` option. Not through `new URL()`: a password holding an
 * unescaped '/', '?', '#' or '@' is parsed as the host's port, a path, a query or a fragment (or not
 * at all), and was printed as such.
 */
export function maskUrl(url: string): string {
  let out = url;
  const at = credentialsEnd(url);
  if (at >= 0) {
    const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url)?.[0].length ?? 0;
    const colon = url.indexOf(':', scheme);
    if (colon >= 0 && colon < at) out = `${url.slice(0, colon + 1)}***${url.slice(at)}`;
  }
  return out.replace(/([?&]password=)[^&#]*/gi, '$1***');
}

/** `host:port` of a URL (what an operator needs to see when it cannot be reached); never its credentials. */
export function hostPort(url: string): string {
  const at = credentialsEnd(url);
  // Only what follows the credentials: `new URL()` reads a password with a '/' as host and port.
  const rest = at >= 0 ? url.slice(at + 1) : url.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  // A host name or an IP (never option text such as `a&password=…` taken for one).
  const m = /^(\[[0-9a-fA-F:.]*\]|[A-Za-z0-9._-]*)(?::(\d*))?(?:[/?#]|$)/.exec(rest);
  if (!m) return 'an unparsable URL';
  return `${m[1] || 'localhost'}:${m[2] || '5432'}`;
}

/**
 * Checks a URL and makes its pool config.
 * @throws {Error} for a URL that is not `postgres://` or `postgresql://` (the message masks the password)
 */
export function poolConfig(options: PostgresConnectionOptions): pg.PoolConfig {
  let u: URL;
  try {
    u = new URL(options.url);
  } catch {
    throw new Error(`--postgres-url is not a URL: ${maskUrl(options.url)}`);
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') {
    throw new Error(`--postgres-url must start with postgres:// : got ${maskUrl(options.url)}`);
  }
  // A raw '/', '?' or '#' in the password makes the URL parse with part of it as host, port or path,
  // which the driver would then connect to (and name in its errors).
  if (hostPort(options.url) !== `${u.hostname || 'localhost'}:${u.port || '5432'}`) {
    throw new Error(
      `--postgres-url: percent-encode '/', '?', '#' and '@' in the user name and password: got ${maskUrl(options.url)}`,
    );
  }
  const size = options.poolSize ?? 10;
  if (!Number.isInteger(size) || size < 2 || size > 1000) {
    throw new Error(`Cannot open the PostgreSQL store as 'poolSize' must be an integer 2..1000: got ${size}`);
  }
  return {
    connectionString: options.url,
    max: size,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 2000,
    query_timeout: options.queryTimeoutMs ?? 5000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    types,
    application_name: 'tether-memory',
  };
}

/** SQLSTATE classes and codes that mean "the database cannot serve now", not "this request is wrong". */
const UNAVAILABLE_CODES = new Set(['57P01', '57P02', '57P03', '53300', '40001', '40P01', '55P03']);
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE']);

/** True when `err` says the database is down, unreachable, restarting or overloaded. */
export function isUnavailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  if (!e) return false;
  if (e.code && (UNAVAILABLE_CODES.has(e.code) || NETWORK_CODES.has(e.code) || e.code.startsWith('08'))) return true;
  const m = e.message ?? '';
  return /Connection terminated|timeout exceeded when trying to connect|Query read timeout|connection timeout|Client has encountered a connection error|Cannot use a pool after calling end/i.test(
    m,
  );
}

/**
 * What a store call rethrows: a `TetherError` as it is, a connection failure as 503 `unavailable`
 * (+ `Retry-After: 1`), anything else unchanged (the server answers 500 and logs it).
 */
export function storeError(err: unknown): unknown {
  if (err instanceof TetherError) return err;
  if (isUnavailable(err)) return unavailable('the database is unavailable; try again shortly', 1);
  return err;
}

/**
 * Runs `work` in one transaction on one client of `pool`: committed when it resolves, rolled back when it
 * throws; a client whose connection broke is discarded, not returned to the pool. Failures mapped by `storeError`.
 */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw storeError(err);
  }
  let broken = false;
  try {
    await client.query('BEGIN');
    const out = await work(client);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    broken = isUnavailable(err);
    if (!broken) await client.query('ROLLBACK').catch(() => {});
    throw storeError(err);
  } finally {
    client.release(broken);
  }
}
