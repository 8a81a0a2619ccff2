/**
 * @module
 * `tether memory`: the memory server on its embedded store (SQLite) or on PostgreSQL shared by
 * replicas (`--store postgres`). Flags have env equivalents (`TETHER_HOST`, `TETHER_PORT`, `TETHER_DATA`, …). Stops gracefully on SIGTERM/SIGINT within 10 s.
 */
import type { Command } from 'commander';
import { startMemoryServer } from '../server/standalone.ts';
import { maskUrl } from '../store/postgres/connection.ts';
import { banner, printBanner } from './banner.ts';
import { DRIVERS, pickStore } from './drivers.ts';
import { countFlag, durationFlag, portFlag, usage } from './flag-values.ts';
import { kubernetesPlugins } from './kubernetes-option.ts';
import { commandLogger, logFormatOption } from './log-option.ts';
import { loadRegistryOption } from './registry-option.ts';
import { onShutdown } from './shutdown.ts';

/** Memory server flags after parsing. */
export interface MemoryFlags {
  logFormat: string;
  host: string;
  port: string;
  data: string;
  store: string;
  postgresUrl?: string;
  poolSize: string;
  registry: string;
  keyCacheTtl: string;
  kubeconfig?: string;
  kubernetes: boolean;
  audience: string;
  kubernetesKeyTtl: string;
  allowedNamespaces?: string;
  allowedServiceAccounts?: string;
  kubernetesTimeout: string;
  metricsToken?: string;
  keyRateLimit: string;
  purgesPerMinute: string;
  maxScanEvents: string;
  bodyBytesInWork: string;
  requestTimeout: string;
}

const env = process.env;

/** Registers `tether memory`. */
export function registerMemoryCommand(program: Command): void {
  program
    .command('memory')
    .description('run the memory server')
    .option('--host <host>', 'address to listen on (TETHER_HOST)', env.TETHER_HOST ?? '127.0.0.1')
    .option('--port <port>', 'port to listen on (TETHER_PORT)', env.TETHER_PORT ?? '8080')
    .option('--data <dir>', 'data folder: SQLite file and admin.key (TETHER_DATA)', env.TETHER_DATA ?? '.tether/memory')
    .option(
      '--store <kind>',
      'where memory is kept: sqlite or postgres (TETHER_STORE)',
      env.TETHER_STORE ?? DRIVERS.store.default,
    )
    .option(
      '--postgres-url <url>',
      'postgres://user:pass@host:port/db, with --store postgres (TETHER_POSTGRES_URL)',
      env.TETHER_POSTGRES_URL,
    )
    .option(
      '--pool-size <n>',
      'PostgreSQL connections of this replica (TETHER_POSTGRES_POOL_SIZE)',
      env.TETHER_POSTGRES_POOL_SIZE ?? '10',
    )
    .option(
      '--registry <name|file>',
      'default registry for new tenants (TETHER_REGISTRY)',
      env.TETHER_REGISTRY ?? 'personal',
    )
    .option(
      '--key-cache-ttl <duration>',
      'how long a replica trusts a cached key check (TETHER_KEY_CACHE_TTL)',
      env.TETHER_KEY_CACHE_TTL ?? '30s',
    )
    .option('--no-kubernetes', 'do not serve POST /v1/auth/kubernetes')
    .option(
      '--kubeconfig <file>',
      'kubeconfig for TokenReview and the owner chain (KUBECONFIG; else in-cluster)',
      env.KUBECONFIG,
    )
    .option(
      '--audience <aud>',
      'audience the workload token must carry (TETHER_AUDIENCE)',
      env.TETHER_AUDIENCE ?? 'tether',
    )
    .option(
      '--kubernetes-key-ttl <duration>',
      'life of an exchanged key (TETHER_KUBERNETES_KEY_TTL)',
      env.TETHER_KUBERNETES_KEY_TTL ?? '15m',
    )
    .option(
      '--allowed-namespaces <list>',
      'comma-separated namespaces that may exchange tokens (TETHER_ALLOWED_NAMESPACES)',
      env.TETHER_ALLOWED_NAMESPACES,
    )
    .option(
      '--allowed-service-accounts <list>',
      'comma-separated ns/name service accounts that may exchange (TETHER_ALLOWED_SERVICE_ACCOUNTS)',
      env.TETHER_ALLOWED_SERVICE_ACCOUNTS,
    )
    .option(
      '--kubernetes-timeout <duration>',
      'timeout of each call to the API server, at most 10s (TETHER_KUBERNETES_TIMEOUT)',
      env.TETHER_KUBERNETES_TIMEOUT ?? '5s',
    )
    .option(
      '--metrics-token <token>',
      '/metrics needs Authorization: Bearer <token>, and then also shows event counts (TETHER_METRICS_TOKEN)',
      env.TETHER_METRICS_TOKEN,
    )
    .option(
      '--key-rate-limit <n>',
      'requests per second per key, bursts of 10 s worth; 0 = no limit (TETHER_KEY_RATE_LIMIT)',
      env.TETHER_KEY_RATE_LIMIT ?? '100',
    )
    .option(
      '--purges-per-minute <n>',
      'purges per minute per admin tenant; 0 = no limit (TETHER_PURGES_PER_MINUTE)',
      env.TETHER_PURGES_PER_MINUTE ?? '6',
    )
    .option(
      '--max-scan-events <n>',
      'most events one as_of read may fold before it is refused (TETHER_MAX_SCAN_EVENTS)',
      env.TETHER_MAX_SCAN_EVENTS ?? '20000',
    )
    .option(
      '--body-bytes-in-work <n>',
      'request body bytes worked on at once; more waits, unread, for room (TETHER_BODY_BYTES_IN_WORK)',
      env.TETHER_BODY_BYTES_IN_WORK ?? String(512 * 1024),
    )
    .option(
      '--request-timeout <duration>',
      'time a client has to send a whole request, head and body; past it 408; 0 = no limit (TETHER_REQUEST_TIMEOUT)',
      env.TETHER_REQUEST_TIMEOUT ?? '30s',
    )
    .addOption(logFormatOption())
    .action(async (flags: MemoryFlags) => {
      // Checked before the store is opened: a bad value exits 2 (usage).
      const port = portFlag('--port', flags.port);
      const keyCacheTtlMs = durationFlag('--key-cache-ttl', flags.keyCacheTtl);
      const requestTimeoutMs = Math.ceil(durationFlag('--request-timeout', flags.requestTimeout));
      const limits = {
        perKeyPerSecond: countFlag('--key-rate-limit', flags.keyRateLimit),
        purgesPerMinute: countFlag('--purges-per-minute', flags.purgesPerMinute),
      };
      const maxScanEvents = Math.max(1, countFlag('--max-scan-events', flags.maxScanEvents));
      const maxBodyBytesInWork = Math.max(1, countFlag('--body-bytes-in-work', flags.bodyBytesInWork));
      const defaultRegistry = usage('--registry', () => loadRegistryOption(flags.registry));
      const log = commandLogger('tether-memory', flags);
      const plugins = kubernetesPlugins(flags, log);
      // The server owns the store from here: it closes it when it fails to start.
      const running = await startMemoryServer({
        ...(await pickStore(flags, log)),
        host: flags.host,
        port,
        dataDir: flags.data,
        defaultRegistry,
        log,
        adminKey: env.TETHER_ADMIN_KEY,
        keyCacheTtlMs,
        metricsToken: flags.metricsToken || undefined,
        limits,
        maxScanEvents,
        maxBodyBytesInWork,
        requestTimeoutMs,
        plugins,
      });
      const where = flags.postgresUrl && running.store.kind === 'postgres' ? maskUrl(flags.postgresUrl) : undefined;
      log.info(
        { url: running.url, adminKeyFile: running.adminKeyFile, store: running.store.kind, database: where },
        'memory server listening',
      );
      await printBanner(
        log,
        banner(`Tether memory server listening on ${running.url}`, {
          memoryUrl: running.url,
          store: where ? `PostgreSQL ${where}` : undefined,
          adminKeyFile: running.adminKeyFile,
          consoleUrl: `${running.url}/console/`,
        }),
      );
      onShutdown(log, () => running.close());
    });
}
