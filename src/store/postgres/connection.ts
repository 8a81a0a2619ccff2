/**
 * @module
 * How the PostgreSQL store connects: a `pg` pool with timeouts (so a database that is down or
 * unreachable answers within a bounded time), bigint columns read as numbers, URLs printed with the
 * password masked, and connection failures turned into 503 `unavailable` for clients. The password
 * never appears in a message made here.
 */
import pg from 'pg';
import { TetherError, unavailable } from '../../common/errors.ts';

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

/** `url` with its password replaced by `***` (for logs and errors). */
export function maskUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url.replace(/\/\/([^:/@]+):[^@/]*@/, '//$1:***@');
  }
}

/** `host:port` of a URL (what an operator needs to see when it cannot be reached). */
export function hostPort(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname || 'localhost'}:${u.port || '5432'}`;
  } catch {
    return 'an unparsable URL';
  }
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
