/**
 * @module
 * `startGateway`: wires services, the runtime and session store it is given (the CLI's driver table,
 * cli/drivers.ts, picks them; the gateway builds none), scheduler, reconciler, the public proxy server and the
 * admin server (127.0.0.1) into one running gateway, and `close()` that leaves no instance behind. Called by
 * `tether gateway` (src/cli/gateway-command.ts) and `tether up` (src/up/platform.ts).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Server as NetServer } from 'node:net';
import type { Duplex } from 'node:stream';
import { type Clock, systemClock } from '../common/clock.ts';
import { TetherError } from '../common/errors.ts';
import { createLogger, type Logger } from '../common/log.ts';
import type { InstanceRuntime } from '../runtime/runtime.ts';
import { claimNamer } from '../sessions/claim-name.ts';
import type { SessionStore } from '../sessions/session-store.ts';
import { createAdminHandler } from './admin-server.ts';
import { createGatewayCore } from './core.ts';
import { createFrontServer } from './proxy/front-server.ts';
import { createHttpProxy } from './proxy/http-proxy.ts';
import { sendSocketError } from './proxy/respond.ts';
import { createUpgradeProxy } from './proxy/ws-proxy.ts';
import { rehydrate } from './rehydrate.ts';
import type { ReloadResult } from './reload.ts';
import { Router } from './router.ts';
import { checkUnique, loadServices } from './services/load-services.ts';
import type { ServiceConfig } from './services/service-config.ts';
import { sessionKeyPolicy } from './session-key.ts';
import type { SessionEvents } from './session-table.ts';
import { writeBack } from './write-back.ts';

/** Options of `startGateway`. */
export interface GatewayOptions {
  /** A manifest file or folder, or already parsed services. */
  services: string | readonly ServiceConfig[];
  /** How `reload()` reads the services again. @default `loadServices(services)` for a path; none for parsed ones */
  reloadServices?: () => Promise<readonly ServiceConfig[]>;
  /** Public port; 0 picks one. @default 8081 */
  port?: number;
  /** Public bind address. @default '0.0.0.0' */
  host?: string;
  /** Admin port, always on 127.0.0.1; 0 picks one. @default 8082 */
  adminPort?: number;
  /** Hosts are `<name>.<namespace>.<domain>`. @default 'example.com' */
  domain?: string;
  /** Max wait of a new session for a slot (ms). @default 30000 */
  queueTimeoutMs?: number;
  /** Max waiting requests per service before 503 at once. @default 1000 */
  maxQueue?: number;
  /** Max time an instance may take to become ready (ms). @default 60000 */
  startTimeoutMs?: number;
  /**
   * Longest a request waits for its instance to start or resume (a Kubernetes claim bound, a Sandbox Ready,
   * a resume from Suspended) before 503 + Retry-After; the start or resume goes on (ms). @default none
   */
  clusterWaitMs?: number;
  /**
   * Max live instances of all services together, warm-pool ones included; beyond it new sessions wait in
   * the queue (503 + Retry-After on timeout), like `max-scale` per service. @default 32
   */
  maxInstances?: number;
  /** Upstream inactivity timeout (ms); 0 = none. @default 300000 */
  proxyTimeoutMs?: number;
  /** Idle client keep-alive connections on the public port are closed after this long (ms). @default 65000 */
  keepAliveTimeoutMs?: number;
  /** Reconcile tick (ms). @default 200 */
  reconcileIntervalMs?: number;
  /**
   * When set, every admin route but `/healthz` and the console's files needs `Authorization: Bearer
   * <adminToken>` (401 otherwise). The admin API lists raw session keys and ends sessions: `tether gateway`
   * and `tether up` always set one (generated when not given) unless told `--insecure-open-admin`.
   * @default undefined (none: tests and benchmarks in one process)
   */
  adminToken?: string;
  /**
   * The per-deployment secret (>= 16 bytes) that keys session claim/agent names (sessions/claim-name.ts).
   * Keep it: a new secret gives every returning session a new agent, without its old memory.
   * @default a random one, so names change at each start (the CLI always passes the kept one)
   */
  claimSecret?: string;
  /** The secret (>= 16 bytes) that signs session keys. @default a random one: signed keys end with the process */
  sessionSecret?: string;
  /** Services without `tether.dev/signed-session-keys` accept only gateway-signed session keys. @default false */
  signedSessionKeys?: boolean;
  /** Every new session's `Set-Cookie` gets `Secure` (TLS ends before the gateway). @default false */
  secureCookies?: boolean;
  /** Addresses or CIDRs whose `X-Forwarded-Proto: https` makes a new session's cookie `Secure`. @default none */
  trustedProxies?: readonly string[];
  /** Wait for the initial warm pool and min-scale instances before resolving. @default true */
  waitForWarm?: boolean;
  /**
   * Where sessions and instances are kept. A durable one (Redis) makes instances outlive the gateway: `close()`
   * leaves them running and the next gateway with the same `gatewayId` adopts them. The gateway owns it (and
   * `runtime`) from this call: closed at `close()`, or at once when the gateway fails to start.
   */
  sessionStore: SessionStore;
  /** This gateway's id in the session store (which gateway bound a session). @default 'gateway' */
  gatewayId?: string;
  /**
   * New sessions per client address per minute; past it 429 + Retry-After (0 = no limit). The address is the
   * socket's, or X-Forwarded-For's when the socket is one of `trustedProxies`. @default 60
   */
  newSessionsPerMinute?: number;
  /**
   * Percent (1-100) of a service's capacity (target × max-scale, or × `maxInstances` without max-scale) one
   * client address keeps while another address waits for the service: beyond it, its sessions give way
   * (address-share.ts). 100 = no share. The address is found as for `newSessionsPerMinute`. @default 50
   */
  addressShare?: number;
  /** Listeners of session bindings (bound / ended). */
  events?: SessionEvents;
  /**
   * How long start-up waits for the session store before serving anyway (503 + Retry-After until the store is
   * read; it is retried with back-off meanwhile) (ms). @default 5000
   */
  storeWaitMs?: number;
  /** Where instances run (local processes, or Kubernetes sandboxes). */
  runtime: InstanceRuntime;
  log?: Logger;
  clock?: Clock;
}

/** A running gateway. */
export interface Gateway {
  /** e.g. `http://127.0.0.1:8081` */
  publicUrl: string;
  /** e.g. `http://127.0.0.1:8082` */
  adminUrl: string;
  /** The services it was started with (the banner's curl lines). */
  services: readonly ServiceConfig[];
  /** Runs one reconcile pass now (tests with a ManualClock). */
  reconcile(): void;
  /**
   * Reads the manifests again and applies them (reload.ts says what happens to live sessions); `tether
   * gateway` and `tether up` call it on SIGHUP. Reloads run one at a time.
   * @throws {ManifestError} when a manifest is invalid: nothing changes then
   */
  reload(): Promise<ReloadResult>;
  /** Stops serving, deletes every instance, closes the store. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * Starts a gateway.
 * @throws {ManifestError} when a manifest is invalid (nothing is served then)
 * @example
 * ```ts
 * const runtime = openLocalRuntime({ log }); // cli/drivers.ts, the one place drivers are built
 * const sessionStore = pickSessionStore({ sessionStore: 'memory', redisPrefix: 'tether:' }, log);
 * const gw = await startGateway({ services: 'examples/services', runtime, sessionStore, port: 0, adminPort: 0 });
 * await gw.close();
 * ```
 */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const { runtime, sessionStore: store } = options;
  // A durable store keeps the bindings: leave their instances running for the next gateway to adopt.
  const cleanup = async () => {
    if (store.durable) await runtime.detach();
    else await runtime.close();
    await store.close();
  };
  try {
    return await start(options, cleanup);
  } catch (err) {
    await cleanup().catch(() => {}); // the first error is the one to report
    throw err;
  }
}

async function start(options: GatewayOptions, cleanup: () => Promise<void>): Promise<Gateway> {
  const { runtime, sessionStore: store } = options;
  const log = (options.log ?? createLogger({ name: 'tether-gateway' })).child({ component: 'gateway' });
  const configs = typeof options.services === 'string' ? await loadServices(options.services) : options.services;
  checkUnique(configs);
  // Checked before anything starts: a bad --trusted-proxies entry or short secret refuses to serve.
  const keys = sessionKeyPolicy({
    secret: options.sessionSecret,
    signedByDefault: options.signedSessionKeys,
    secureCookies: options.secureCookies,
    trustedProxies: options.trustedProxies,
  });
  const claimName = options.claimSecret === undefined ? undefined : claimNamer(options.claimSecret);
  const gatewayId = options.gatewayId ?? 'gateway';
  const core = createGatewayCore({
    gatewayId,
    events: options.events,
    newSessionsPerMinute: options.newSessionsPerMinute ?? 60,
    addressShare: options.addressShare ?? 50,
    services: configs,
    domain: options.domain ?? 'example.com',
    runtime,
    store,
    clock: options.clock ?? systemClock,
    log,
    queueTimeoutMs: options.queueTimeoutMs ?? 30_000,
    maxQueue: options.maxQueue,
    startTimeoutMs: options.startTimeoutMs ?? 60_000,
    clusterWaitMs: options.clusterWaitMs,
    maxInstances: options.maxInstances ?? 32,
    tickMs: options.reconcileIntervalMs ?? 200,
    claimName,
  });
  const { services, scheduler, metrics, reconcile } = core;
  // Nothing is placed, started or reconciled before the store was read and the runtime's instances adopted.
  core.hydrated = false;
  scheduler.serving = false;
  const router = new Router(services);

  const proxyTimeoutMs = options.proxyTimeoutMs ?? 300_000;
  // The slow path: a node:http server that never listens; the raw HTTP/1.1 front hands it connections
  // carrying upgrades (WebSocket), Expect, HTTP/1.0 or CONNECT at a request boundary.
  const keepAliveTimeoutMs = options.keepAliveTimeoutMs ?? 65_000;
  const slow = createServer(
    // requireHostHeader off: the proxy answers a missing Host itself, as JSON naming the field (hostFieldProblem).
    { keepAliveTimeout: keepAliveTimeoutMs, requireHostHeader: false },
    createHttpProxy({ router, scheduler, keys, proxyTimeoutMs, log }),
  );
  slow.on('upgrade', createUpgradeProxy({ router, scheduler, keys, timeoutMs: proxyTimeoutMs }));
  // sendSocketError answers JSON with Connection: close, or destroys a socket that cannot be written.
  const malformed = (err: Error & { code?: string }, socket: Duplex) =>
    sendSocketError(
      socket,
      err.code === 'HPE_HEADER_OVERFLOW'
        ? new TetherError('headers_too_large', 'request headers too large')
        : new TetherError('invalid_request', 'malformed HTTP request'),
    );
  slow.on('clientError', malformed);
  // CONNECT asks for a tunnel to an address of the client's choosing: the gateway routes requests to services
  // and is no forward proxy. Without a listener node:http would drop the socket with no answer at all.
  slow.on('connect', (_req, socket: Duplex) =>
    sendSocketError(
      socket,
      new TetherError('method_not_allowed', 'CONNECT is not supported: the gateway opens no tunnels'),
    ),
  );
  const front = createFrontServer({ router, scheduler, keys, proxyTimeoutMs, keepAliveTimeoutMs, log }, slow);
  const pub = front.server;
  const admin = createServer(
    createAdminHandler({
      services,
      runtime,
      store,
      metrics,
      table: core.table,
      pool: core.pool,
      adminToken: options.adminToken,
      log,
    }),
  );
  admin.on('clientError', malformed);

  try {
    await listen(pub, options.port ?? 8081, options.host ?? '0.0.0.0');
    await listen(admin, options.adminPort ?? 8082, '127.0.0.1');
  } catch (err) {
    pub.close();
    admin.close();
    throw err; // startGateway closes the runtime and the store
  }
  const tick = setInterval(reconcile, options.reconcileIntervalMs ?? 200);
  tick.unref();
  if (!store.durable) {
    log.warn('session store: memory — sessions do not survive a gateway restart (use --session-store redis)');
  }
  let stopping = false;
  const hydrated = (async () => {
    await store.ready();
    if (stopping) return false;
    const t0 = performance.now();
    const r = await rehydrate(core, { store, runtime, log, gatewayId });
    // From now on this gateway's table is what the store must hold: written back if the store loses it.
    store.onDataLost?.(async () => {
      if (!stopping) await writeBack(core, { store, gatewayId, log });
    });
    core.hydrated = true;
    scheduler.serving = true;
    log.info({ ...r, ms: Math.round(performance.now() - t0) }, 'session store read');
    reconcile();
    return true;
  })();
  hydrated.catch((err: unknown) => {
    if (!stopping) log.error({ err: (err as Error).message }, 'session store could not be read');
  });
  const waited = await Promise.race([
    hydrated.catch(() => false),
    new Promise<false>((r) => setTimeout(() => r(false), options.storeWaitMs ?? 5000).unref()),
  ]);
  if (!waited) log.warn('session store not reachable yet: answering 503 + Retry-After until it is');
  if (waited && (options.waitForWarm ?? true)) {
    await Promise.all(services.flatMap((s) => [...s.instances.values()].map((i) => i.ready.catch(() => {}))));
  }
  const publicUrl = `http://${urlHost(pub, options.host ?? '0.0.0.0')}`;
  const adminUrl = `http://${urlHost(admin, '127.0.0.1')}`;
  log.info({ publicUrl, adminUrl, services: services.map((s) => s.host) }, 'gateway listening');

  const path = options.services;
  const readAgain = options.reloadServices ?? (typeof path === 'string' ? () => loadServices(path) : undefined);
  let reloading: Promise<unknown> = Promise.resolve();
  const reload = async (): Promise<ReloadResult> => {
    if (readAgain === undefined) throw new Error('this gateway was given parsed services: nothing to read again');
    const next = await readAgain();
    checkUnique(next); // a refused set leaves the running config as it is
    if (closing) throw new Error('the gateway is stopping');
    const result = core.applyServices(next);
    router.replace(services);
    return result;
  };

  let closing: Promise<void> | undefined;
  return {
    publicUrl,
    adminUrl,
    services: configs,
    reconcile,
    reload() {
      const run = reloading.then(reload);
      reloading = run.catch(() => {});
      return run;
    },
    close() {
      closing ??= (async () => {
        stopping = true;
        clearInterval(tick);
        core.stop();
        const closed = Promise.all([
          new Promise<void>((resolve) => {
            pub.close(() => resolve());
            front.closeAll();
          }),
          closeServer(admin),
        ]);
        await cleanup();
        await closed;
        log.info('gateway stopped');
      })();
      return closing;
    },
  };
}

function listen(server: NetServer, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function urlHost(server: NetServer, host: string): string {
  const port = (server.address() as AddressInfo).port;
  const h = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return h.includes(':') ? `[${h}]:${port}` : `${h}:${port}`;
}
