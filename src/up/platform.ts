/**
 * @module
 * `tether up`: the whole platform on one machine with no Kubernetes. Starts the local identity
 * authority (Kubernetes identity endpoints for the gateway's own instances), the memory server with
 * workload identity pointed at it, and the session gateway whose instances get workload tokens — so
 * an agent in a local instance exchanges its token exactly as it would in a cluster sandbox. It builds no
 * driver: the CLI's driver table (cli/drivers.ts `localPlatformDrivers`) gives the store, session store and
 * runtime.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type AuthorityApiServer, startAuthorityApi } from '../auth/local-authority/api-server.ts';
import { LocalIdentityAuthority } from '../auth/local-authority/authority.ts';
import { type Clock, systemClock } from '../common/clock.ts';
import { parseDuration } from '../common/durations.ts';
import type { Logger } from '../common/log.ts';
import { loadOrCreateSecret } from '../common/secret-file.ts';
import { loadDeploymentSecrets } from '../gateway/deployment-secrets.ts';
import { type Gateway, startGateway } from '../gateway/gateway.ts';
import { checkUnique, loadServices } from '../gateway/services/load-services.ts';
import type { ServiceConfig } from '../gateway/services/service-config.ts';
import type { InstanceRuntime } from '../runtime/runtime.ts';
import type { DataLock } from '../server/data-lock.ts';
import { type RunningMemoryServer, startMemoryServer } from '../server/standalone.ts';
import { workloadIdentityPlugin } from '../server/workload-identity.ts';
import type { SessionStore } from '../sessions/session-store.ts';
import type { PredicateDef, Store } from '../store/store.ts';
import { withWorkloadIdentity } from './identity-runtime.ts';

/**
 * The drivers of the platform, each opened when the platform needs it (the CLI picks them: cli/drivers.ts).
 * The platform owns what they open: it closes them at `close()`, or when it fails to start.
 */
export interface PlatformDrivers {
  /** Opens the memory server's store in `dataDir` (the platform's memory/ folder), taking the folder. */
  openStore(dataDir: string): Promise<{ store: Store; dataLock: DataLock | null }>;
  /** The gateway's session store. */
  openSessionStore(clock: Clock): SessionStore;
  /**
   * The instance runtime, made once the memory server listens: `memoryUrl` is what isolated instances may
   * reach, and they never see the `hidden` folders.
   */
  openRuntime(o: {
    memoryUrl: string;
    hidden: readonly string[];
    log: Logger;
  }): Promise<{ runtime: InstanceRuntime; isolation: 'namespaces' | 'none' }>;
}

/** Options for `startLocalPlatform`. */
export interface LocalPlatformOptions {
  /**
   * Folder for everything: memory/ (SQLite, admin.key), gateway/ (claim.secret, session.secret, admin.token),
   * authority/ (kubeconfig), instances/ (tokens).
   */
  dataDir: string;
  /** Knative Service manifests: files or folders. */
  services: readonly string[];
  /** @default '127.0.0.1' */
  host?: string;
  /** Memory server port. @default 8080 */
  memoryPort?: number;
  /** Gateway public port. @default 8081 */
  gatewayPort?: number;
  /** Gateway admin port. @default 8082 */
  adminPort?: number;
  /** @default 'example.com' */
  domain?: string;
  defaultRegistry: readonly PredicateDef[];
  /** Bootstrap admin key text (`TETHER_ADMIN_KEY`). */
  adminKey?: string;
  /** Workload-token audience. @default 'tether' */
  audience?: string;
  /** Life of an exchanged key. @default '15m' */
  keyTtl?: string;
  /** Services without `tether.dev/signed-session-keys` accept only gateway-issued session keys. @default false */
  signedSessionKeys?: boolean;
  /** Passed to the gateway (tests use short ones). */
  queueTimeoutMs?: number;
  /** Store, session store and runtime (cli/drivers.ts `localPlatformDrivers`). */
  drivers: PlatformDrivers;
  log: Logger;
  clock?: Clock;
}

/** The running platform. */
export interface LocalPlatform {
  memory: RunningMemoryServer;
  gateway: Gateway;
  /** The services loaded from the manifests. */
  services: readonly ServiceConfig[];
  /** The web console: on the memory server, reaching the gateway admin API through it. */
  consoleUrl: string;
  authority: AuthorityApiServer;
  /** The isolation in force. */
  isolation: 'namespaces' | 'none';
  /** The file holding the gateway admin token (mode 0600): the admin API needs `Authorization: Bearer <it>`. */
  adminTokenFile: string;
  /** Stops the gateway (and every instance), then the memory server and the authority. Safe twice. */
  close(): Promise<void>;
}

/** Starts memory server, identity authority and gateway. */
export async function startLocalPlatform(o: LocalPlatformOptions): Promise<LocalPlatform> {
  const clock = o.clock ?? systemClock;
  const audience = o.audience ?? 'tether';
  // Instances run in their manifest's folder: every path handed to them must be absolute.
  const dataDir = resolve(o.dataDir);
  const log = o.log;
  const namespaces = new Map<string, string>();
  // Read at start and again on each reload (SIGHUP): the identity authority follows the namespaces.
  const readServices = async () => {
    const all = (await Promise.all(o.services.map((p) => loadServices(p)))).flat();
    checkUnique(all);
    for (const s of all) namespaces.set(s.name, s.namespace);
    return all;
  };
  const services = await readServices();
  const namespaceOf = (service: string) => namespaces.get(service) ?? 'default';

  mkdirSync(join(dataDir, 'authority'), { recursive: true, mode: 0o700 });
  // The gateway's secrets and admin token: generated once, kept (claim names depend on the claim secret).
  const gatewayDir = join(dataDir, 'gateway');
  const secrets = loadDeploymentSecrets(gatewayDir);
  const adminTokenFile = join(gatewayDir, 'admin.token');
  const adminToken = loadOrCreateSecret(adminTokenFile).value;
  const authority = await LocalIdentityAuthority.create({ clock });
  const api = await startAuthorityApi(authority, { kubeconfigPath: join(dataDir, 'authority', 'kubeconfig') });

  let memory: RunningMemoryServer | undefined;
  let local: { runtime: InstanceRuntime; isolation: 'namespaces' | 'none' } | undefined;
  /** Set once the runtime is the gateway's: it closes it, also when it fails to start. */
  let handedOver = false;
  // Known once the gateway listens; until then the console shows memory only.
  let gatewayAdminUrl: string | undefined;
  try {
    const keyTtl = o.keyTtl ?? '15m';
    const keyTtlMs = parseDuration(keyTtl);
    if (!(keyTtlMs >= 1000)) throw new Error(`--kubernetes-key-ttl must be at least 1s: got ${keyTtl}`);
    const identity = workloadIdentityPlugin({
      configured: true,
      kubeconfig: api.kubeconfigPath,
      audience,
      keyTtlMs,
      // The authority answers from this process: a call is slow only when the machine is (a loaded one
      // took over 2 s), never because a cluster hangs; so the longest the exchanger allows.
      requestTimeoutMs: 10_000,
      log,
    });
    const memoryDir = join(dataDir, 'memory');
    memory = await startMemoryServer({
      ...(await o.drivers.openStore(memoryDir)),
      host: o.host ?? '127.0.0.1',
      port: o.memoryPort ?? 8080,
      dataDir: memoryDir,
      defaultRegistry: o.defaultRegistry,
      log: log.child({ component: 'memory' }),
      adminKey: o.adminKey,
      clock,
      consoleGateway: () => gatewayAdminUrl,
      plugins: [identity],
    });
    // Instances see nothing of the data folder (memory, admin key, authority, tokens), even when it lies
    // inside a folder they read (the default .tether is inside the checkout the example agents run from).
    local = await o.drivers.openRuntime({ memoryUrl: memory.url, hidden: [dataDir], log });
    const runtime = withWorkloadIdentity(local.runtime, {
      authority,
      namespaceOf,
      tokenDir: join(dataDir, 'instances'),
      memoryUrl: memory.url,
      audience,
      log,
    });
    const sessionStore = o.drivers.openSessionStore(clock);
    handedOver = true;
    const gateway = await startGateway({
      services,
      reloadServices: readServices,
      port: o.gatewayPort ?? 8081,
      host: o.host ?? '127.0.0.1',
      adminPort: o.adminPort ?? 8082,
      domain: o.domain,
      queueTimeoutMs: o.queueTimeoutMs,
      runtime,
      sessionStore,
      // A bound session owns its instance's sandbox at the authority, as a SandboxClaim adopts a sandbox.
      events: { bound: (r) => authority.claimInstance(namespaceOf(r.service), r.instance, r.claim) },
      adminToken,
      claimSecret: secrets.claimSecret,
      sessionSecret: secrets.sessionSecret,
      signedSessionKeys: o.signedSessionKeys,
      log,
      clock,
    });
    gatewayAdminUrl = gateway.adminUrl;
    const mem = memory;
    let closing: Promise<void> | undefined;
    return {
      memory: mem,
      gateway,
      services,
      consoleUrl: `${mem.url}/console/`,
      authority: api,
      isolation: local.isolation,
      adminTokenFile,
      close() {
        closing ??= (async () => {
          await gateway.close();
          await mem.close();
          await api.close();
        })();
        return closing;
      },
    };
  } catch (err) {
    if (!handedOver) await local?.runtime.close();
    await memory?.close();
    await api.close();
    throw err;
  }
}
