/**
 * @module
 * Runs a whole memory server on the store it is given: ensures the admin key, builds the app, listens, and
 * closes gracefully (in-flight requests finish, the store is closed cleanly). It opens no store: the CLI's
 * driver table (cli/drivers.ts) does. Used by `tether memory`, `tether up` and tests that need a real
 * listening server.
 */
import type { FastifyInstance } from 'fastify';
import { ensureAdminKey } from '../auth/bootstrap.ts';
import { KeyService } from '../auth/key-service.ts';
import { type Clock, systemClock } from '../common/clock.ts';
import type { Logger } from '../common/log.ts';
import type { PredicateDef, Store } from '../store/store.ts';
import { createMemoryServer, type MemoryServer, type MemoryServerOptions } from './app.ts';
import type { DataLock } from './data-lock.ts';
import { prepareImportWorker } from './import-off-loop.ts';
import type { MemoryMetrics } from './metrics.ts';

/** How long an expired key is kept (so `key_expired`, not `unauthenticated`, answers its late use), ms. */
export const EXPIRED_KEY_RETENTION_MS = 24 * 3_600_000;

/** Options for `startMemoryServer`. */
export interface StandaloneOptions {
  /** @default '127.0.0.1' */
  host?: string;
  /** 0 picks a free port. @default 8080 */
  port?: number;
  /** Data folder of admin.key (and of the SQLite file the store keeps there), or `:memory:`. */
  dataDir: string;
  /**
   * The store (opened by the CLI's driver table, cli/drivers.ts). The server owns it from this call: it
   * closes it at `close()`, or at once when it fails to start.
   */
  store: Store;
  /** The data folder's lock, taken before the store was opened (SQLite); released once the store is closed. */
  dataLock?: DataLock | null;
  defaultRegistry: readonly PredicateDef[];
  log: Logger;
  /** The bootstrap admin key text (`TETHER_ADMIN_KEY`). */
  adminKey?: string;
  /** @default 30000 */
  keyCacheTtlMs?: number;
  clock?: Clock;
  /** Request and purge rate limits. @default 100 requests/s per key, 6 purges a minute per admin tenant */
  limits?: MemoryServerOptions['limits'];
  /** Request body bytes in work at once. @default 512 KiB */
  maxBodyBytesInWork?: number;
  /** Time a client has to send a whole request, ms; past it 408. 0 = no limit. @default 30000 */
  requestTimeoutMs?: number;
  /** Most events one `as_of` read folds. @default 20000 */
  maxScanEvents?: number;
  /** Import bodies of this many characters or more are parsed on a worker thread. @default 64 Ki */
  importOffLoopBytes?: number;
  /** Bearer token for /metrics (and the event counts on it). */
  metricsToken?: string;
  /** The gateway admin URL the web console reaches through this server (`tether up`). */
  consoleGateway?: () => string | undefined;
  plugins?: ((
    app: FastifyInstance,
    deps: { metrics: MemoryMetrics; keys: KeyService; clock: Clock },
  ) => Promise<void>)[];
}

/** A running memory server. */
export interface RunningMemoryServer {
  url: string;
  adminKeyFile: string | null;
  server: MemoryServer;
  store: Store;
  keys: KeyService;
  /** Stops accepting, lets in-flight requests finish, closes the store. Repeat calls are safe. */
  close(): Promise<void>;
}

/** Starts a memory server and listens. */
export async function startMemoryServer(options: StandaloneOptions): Promise<RunningMemoryServer> {
  const clock = options.clock ?? systemClock;
  const lock = options.dataLock ?? null;
  try {
    return await start(options, clock, lock);
  } catch (err) {
    await options.store.close().catch(() => {}); // the first error is the one to report
    lock?.release();
    throw err;
  }
}

async function start(options: StandaloneOptions, clock: Clock, lock: DataLock | null): Promise<RunningMemoryServer> {
  const store = options.store;
  const boot = await ensureAdminKey(store, options.dataDir, options.adminKey, clock.now());
  const keys = new KeyService({ store, clock, cacheTtlMs: options.keyCacheTtlMs });
  // Before the server and its loop watch: from sources, the import worker's bundle holds the loop ~0.15 s.
  prepareImportWorker();
  const server = await createMemoryServer({
    store,
    keys,
    clock,
    log: options.log,
    defaultRegistry: options.defaultRegistry,
    processMetrics: true,
    consoleGateway: options.consoleGateway,
    metricsToken: options.metricsToken,
    limits: options.limits,
    maxScanEvents: options.maxScanEvents,
    importOffLoopBytes: options.importOffLoopBytes,
    maxBodyBytesInWork: options.maxBodyBytesInWork,
    requestTimeoutMs: options.requestTimeoutMs,
    plugins: (options.plugins ?? []).map((p) => (app, deps) => p(app, { ...deps, keys, clock })),
  });
  const address = await server.app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 8080 });
  // Exchanged keys live minutes; sweep them a day after they expire so the table stays small.
  const sweep = setInterval(() => {
    store.deleteExpiredKeys(clock.now() - EXPIRED_KEY_RETENTION_MS).catch((err: unknown) => {
      options.log.warn({ err: (err as Error).message }, 'expired key sweep failed');
    });
  }, 600_000);
  sweep.unref();
  let closing: Promise<void> | undefined;
  return {
    url: address.replace('[::1]', 'localhost'),
    adminKeyFile: boot.keyFile,
    server,
    store,
    keys,
    close() {
      closing ??= (async () => {
        clearInterval(sweep);
        await server.app.close();
        await store.close();
        lock?.release();
      })();
      return closing;
    },
  };
}
