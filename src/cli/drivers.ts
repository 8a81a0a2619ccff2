/**
 * @module
 * The driver table: the one place Tether picks its drivers, from flags and environment — the memory store
 * (`--store sqlite|postgres`), the gateway's session store (`--session-store memory|redis`), the instance
 * runtime (`--runtime local|kubernetes`) and the local runtime's isolation (`--isolation auto|namespaces|none`).
 * `startMemoryServer`, `startGateway` and `startLocalPlatform` take what is opened here and build none
 * (test/architecture/driver-construction.test.ts holds that). Tests and benches open their drivers here too.
 */
import type { Clock } from '../common/clock.ts';
import type { Logger } from '../common/log.ts';
import { checkUnique, loadServices } from '../gateway/services/load-services.ts';
import type { ServiceConfig } from '../gateway/services/service-config.ts';
import { LOG_FOLD_MODULE } from '../memory/log-fold.ts';
import {
  type CreateIsolationOptions,
  createIsolation,
  defaultSandboxDir,
  ISOLATION_MODES,
  type IsolationMode,
  parseIsolationMode,
} from '../runtime/local/isolation/choose-isolation.ts';
import type { Isolation } from '../runtime/local/isolation/sandbox.ts';
import { LocalRuntime, type LocalRuntimeOptions } from '../runtime/local/local-runtime.ts';
import type { InstanceRuntime } from '../runtime/runtime.ts';
import { ANSWER_TEXT_MODULE } from '../server/answer-text.ts';
import { type DataLock, lockDataDir } from '../server/data-lock.ts';
import { MemorySessionStore } from '../sessions/memory-store.ts';
import { RedisSessionStore } from '../sessions/redis/redis-store.ts';
import { parseRedisUrl } from '../sessions/redis/redis-url.ts';
import type { SessionStore } from '../sessions/session-store.ts';
import { maskUrl } from '../store/postgres/connection.ts';
import { openPostgresStore } from '../store/postgres/postgres-store.ts';
import { openSqliteStore, type SqliteStoreOptions } from '../store/sqlite/sqlite-store.ts';
import type { Store } from '../store/store.ts';
import type { PlatformDrivers } from '../up/platform.ts';
import { CliError, EXIT } from './api-client.ts';
import { usage } from './flag-values.ts';
import type { KubernetesRuntimeFlags } from './kubernetes-runtime-option.ts';

/**
 * Every driver port: the flag that picks it, the kinds it takes, the default kind (per command where they
 * differ) and the environment variable that gives the default, if any.
 */
export const DRIVERS = Object.freeze({
  store: { flag: '--store', kinds: ['sqlite', 'postgres'], default: 'sqlite', env: 'TETHER_STORE' },
  sessionStore: { flag: '--session-store', kinds: ['memory', 'redis'], default: 'memory', env: undefined },
  runtime: { flag: '--runtime', kinds: ['local', 'kubernetes'], default: 'local', env: undefined },
  isolation: { flag: '--isolation', kinds: ISOLATION_MODES, default: { gateway: 'none', up: 'auto' }, env: undefined },
} as const);

// ---- the memory store: sqlite | postgres ----

/** The `tether memory` flags the store reads. */
export interface StoreFlags {
  store: string;
  /** The data folder: SQLite's, and admin.key's for both. */
  data: string;
  postgresUrl?: string;
  poolSize: string;
}

/** A store as `startMemoryServer` takes it: the store, and the lock on its data folder (SQLite). */
export interface OpenedStore {
  store: Store;
  dataLock: DataLock | null;
}

/**
 * Opens the store the flags name: SQLite in `--data`, or PostgreSQL at `--postgres-url` with a pool of
 * `--pool-size` (the data folder then holds only `admin.key`, when no `TETHER_ADMIN_KEY` is given).
 * @throws {Error} for an unknown store, a missing URL, a bad pool size, a database that cannot be reached
 *   (naming host and port; the password is never in a message), or a data folder another server holds
 */
export async function pickStore(flags: StoreFlags, log: Logger): Promise<OpenedStore> {
  if (flags.store === 'sqlite') return openSqlite(flags.data);
  if (flags.store !== 'postgres') throw new Error(`--store must be sqlite or postgres: got ${flags.store}`);
  if (!flags.postgresUrl) throw new Error('--store postgres needs --postgres-url (or TETHER_POSTGRES_URL)');
  const poolSize = Number(flags.poolSize);
  if (!Number.isInteger(poolSize) || poolSize < 2 || poolSize > 1000) {
    throw new Error(`--pool-size must be an integer 2..1000: got ${flags.poolSize}`);
  }
  const channel = log.child({ component: 'store-channel', database: maskUrl(flags.postgresUrl) });
  const store = await openPostgresStore({
    url: flags.postgresUrl,
    poolSize,
    onChannelState: (state, detail) => {
      if (state === 'dropped') channel.warn({ detail }, 'change channel dropped; reconnecting (caches flush after)');
      else channel.info('change channel listening');
    },
  });
  return { store, dataLock: null };
}

/**
 * SQLite in `dataDir` (`:memory:` keeps it in memory), once the folder is taken: one server per data folder
 * (server/data-lock.ts), checked before the file is opened.
 * @throws {Error} when another running server holds the folder, or the database cannot be opened
 */
export function openSqlite(dataDir: string, options: Omit<SqliteStoreOptions, 'dataDir'> = {}): OpenedStore {
  const dataLock = lockDataDir(dataDir);
  try {
    // The read workers fold `as_of` reads with the engine's own fold (the store does not import memory/).
    // ...and build heavy answers' text with the server's answer module (nor does it import server/).
    return {
      store: openSqliteStore({ foldModule: LOG_FOLD_MODULE, answerModule: ANSWER_TEXT_MODULE, ...options, dataDir }),
      dataLock,
    };
  } catch (err) {
    dataLock?.release();
    throw err;
  }
}

// ---- the gateway's session store: memory | redis ----

/** The `tether gateway` flags the session store reads. */
export interface SessionStoreFlags {
  sessionStore: string;
  redisUrl?: string;
  redisPrefix: string;
}

/**
 * Builds the session store the flags ask for (Redis connects in the background, retrying with back-off).
 * @param o.env where `TETHER_REDIS_URL` is read. @default process.env
 * @throws {Error} for an unknown kind, a missing or bad `--redis-url` (naming host and port, never the
 *   password), or a bad `--redis-prefix`
 */
export function pickSessionStore(
  flags: SessionStoreFlags,
  log: Logger,
  o: { clock?: Clock; env?: NodeJS.ProcessEnv } = {},
): SessionStore {
  if (flags.sessionStore === 'memory') return new MemorySessionStore(o.clock);
  if (flags.sessionStore !== 'redis') {
    throw new Error(`--session-store: must be 'memory' or 'redis', got '${flags.sessionStore.slice(0, 40)}'`);
  }
  const url = flags.redisUrl ?? (o.env ?? process.env).TETHER_REDIS_URL;
  if (!url)
    throw new Error('--session-store redis needs --redis-url redis://[user:pass@]host:port/db (or TETHER_REDIS_URL)');
  const target = parseRedisUrl(url);
  if (!/^[\w.:-]{1,64}$/.test(flags.redisPrefix)) {
    throw new Error(`--redis-prefix: 1-64 of [A-Za-z0-9_.:-], got '${flags.redisPrefix.slice(0, 70)}'`);
  }
  return new RedisSessionStore({ target, prefix: flags.redisPrefix, log });
}

// ---- isolation of local instances: auto | namespaces | none ----

/**
 * Parses `--isolation`.
 * @throws {CliError} exit 2, naming the flag and the accepted values
 */
export function parseIsolation(text: string): IsolationMode {
  return usage('--isolation', () => parseIsolationMode(text));
}

/**
 * Decides from what the machine allows, logs the decision once and builds the isolation.
 * @returns undefined for plain processes
 * @throws {Error} for `namespaces` on a machine without bubblewrap or user namespaces
 */
export function pickIsolation(o: CreateIsolationOptions): Promise<Isolation | undefined> {
  return createIsolation(o);
}

// ---- the instance runtime: local | kubernetes ----

/** The `tether gateway` flags the runtime reads. */
export interface RuntimeFlags extends KubernetesRuntimeFlags {
  runtime: string;
  /** The local runtime's state folder. */
  stateDir?: string;
}

/** The runtime, and the services as the gateway must see them. */
export interface RuntimeSetup {
  kind: 'local' | 'kubernetes';
  runtime: InstanceRuntime;
  services: ServiceConfig[];
  /** Reads the manifests again (SIGHUP). */
  reloadServices: () => Promise<ServiceConfig[]>;
}

/**
 * Parses `--runtime`.
 * @throws {CliError} exit 2
 */
export function parseRuntimeKind(text: string): RuntimeSetup['kind'] {
  if (text !== 'local' && text !== 'kubernetes') {
    throw new CliError(`--runtime: must be 'local' or 'kubernetes', got '${text.slice(0, 40)}'`, EXIT.usage);
  }
  return text;
}

/**
 * Loads the services for the runtime the flags name and builds it: local processes (sandboxed by
 * `isolation` when given) or Kubernetes agent-sandbox claims (kubernetes-runtime-option.ts).
 * @throws {CliError} exit 2 for a bad `--runtime`; {Error} for a bad Kubernetes flag or kubeconfig; {ManifestError}
 */
export async function pickRuntime(
  flags: RuntimeFlags,
  o: { isolation?: Isolation; log: Logger; clock: Clock },
): Promise<RuntimeSetup> {
  const kind = parseRuntimeKind(flags.runtime);
  if (kind === 'kubernetes') {
    // Loaded only when asked for: `tether memory` and local gateways never read the Kubernetes runtime.
    const { kubernetesRuntime } = await import('./kubernetes-runtime-option.ts');
    return { kind, ...(await kubernetesRuntime(flags, o.log, o.clock)) };
  }
  const log = o.log.child({ component: 'gateway' });
  const services = await loadServices(flags.services);
  checkUnique(services); // as the gateway did before it built its runtime: a bad set builds nothing
  const withImage = services.filter((s) => s.container.image !== undefined);
  if (withImage.length > 0)
    log.warn({ services: withImage.map((s) => s.name) }, 'image is ignored by the local runtime');
  return {
    kind,
    runtime: openLocalRuntime({ log, stateDir: flags.stateDir, isolation: o.isolation }),
    services,
    reloadServices: () => loadServices(flags.services),
  };
}

/** The local runtime (processes, sandboxed by `isolation` when given). */
export function openLocalRuntime(options: LocalRuntimeOptions): LocalRuntime {
  return new LocalRuntime(options);
}

// ---- tether up: all of the above for one machine ----

/** What `tether up` asks of its drivers. */
export interface LocalPlatformDriverOptions {
  /** How instances are isolated. @default 'auto' (namespaces when the machine allows, else plain processes) */
  isolation?: IsolationMode;
  /** Where isolated instances keep their work folders. @default `<tmpdir>/tether-sandboxes-<user>` */
  sandboxDir?: string;
  /** SIGTERM-to-SIGKILL grace when deleting an instance (ms). @default 5000 */
  graceMs?: number;
}

/** `tether up`'s drivers: SQLite, the memory session store, and local processes isolated as asked. */
export function localPlatformDrivers(o: LocalPlatformDriverOptions = {}): PlatformDrivers {
  return {
    openStore: async (dataDir) => openSqlite(dataDir),
    openSessionStore: (clock) => new MemorySessionStore(clock),
    openRuntime: async ({ memoryUrl, hidden, log }) => {
      const isolation = await pickIsolation({
        requested: o.isolation ?? DRIVERS.isolation.default.up,
        why: o.isolation ? 'asked for' : 'the default of tether up',
        memoryUrl,
        hidden,
        dir: o.sandboxDir ?? defaultSandboxDir(),
        log,
      });
      try {
        return {
          runtime: openLocalRuntime({ log, graceMs: o.graceMs, isolation }),
          isolation: isolation ? isolation.mode : 'none',
        };
      } catch (err) {
        await isolation?.close();
        throw err;
      }
    },
  };
}
