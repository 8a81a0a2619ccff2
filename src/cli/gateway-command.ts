/**
 * @module
 * `tether gateway`: parses flags, starts the session gateway (src/gateway/gateway.ts), reloads its
 * manifests on SIGHUP and stops it cleanly on SIGINT/SIGTERM (no instance left behind). A bad flag value exits 2
 * before anything is written (secrets) or connected; a manifest error is printed with its file, document and
 * field and the command exits non-zero before serving anything.
 */
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { systemClock } from '../common/clock.ts';
import { loadDeploymentSecrets } from '../gateway/deployment-secrets.ts';
import { startGateway } from '../gateway/gateway.ts';
import { defaultSandboxDir } from '../runtime/local/isolation/choose-isolation.ts';
import { adminTokenChoice, loadAdminToken } from './admin-token-option.ts';
import { banner, printBanner } from './banner.ts';
import { DRIVERS, parseIsolation, parseRuntimeKind, pickIsolation, pickRuntime, pickSessionStore } from './drivers.ts';
import {
  countFlag,
  durationFlag,
  percentFlag,
  portFlag,
  positiveDurationFlag,
  positiveFlag,
  usage,
} from './flag-values.ts';
import { commandLogger, logFormatOption } from './log-option.ts';
import { onReloadSignal } from './reload-signal.ts';
import { onShutdown } from './shutdown.ts';

/** Flags of `tether gateway`, as commander gives them. */
interface GatewayFlags {
  logFormat: string;
  port: string;
  adminPort: string;
  services: string;
  domain: string;
  queueTimeout: string;
  sessionStore: string;
  redisUrl?: string;
  redisPrefix: string;
  gatewayId?: string;
  newSessionsPerMinute: string;
  addressShare: string;
  host: string;
  startTimeout: string;
  proxyTimeout: string;
  adminToken?: string;
  insecureOpenAdmin?: boolean;
  maxInstances: string;
  stateDir?: string;
  isolation: string;
  data: string;
  signedSessionKeys?: boolean;
  secureCookies?: boolean;
  trustedProxies?: string;
  runtime: string;
  kubeconfig?: string;
  namespace: string;
  memoryUrl?: string;
  audience: string;
  sandboxServiceAccount: string;
  memoryNamespace: string;
  kubernetesTimeout: string;
  clusterWaitTimeout?: string;
}

/** Registers `tether gateway`. */
export function registerGatewayCommand(program: Command): void {
  program
    .command('gateway')
    .description('session gateway: routes each session to its own sandbox instance (Knative Service manifests)')
    .requiredOption('--services <path>', 'a Knative Service YAML file or a folder of them')
    .option('--port <n>', 'public port', '8081')
    .option('--host <addr>', 'public bind address', '0.0.0.0')
    .option('--admin-port <n>', 'admin port (bound to 127.0.0.1)', '8082')
    .option('--domain <domain>', 'hosts are <name>.<namespace>.<domain>', 'example.com')
    .option('--queue-timeout <duration>', 'max wait of a new session for a slot', '30s')
    .option('--start-timeout <duration>', 'max time an instance may take to become ready', '60s')
    .option('--proxy-timeout <duration>', 'upstream inactivity timeout (0 = none)', '5m')
    .option('--state-dir <path>', 'where live instances are recorded, to kill orphans after a crash (default: in tmp)')
    .option('--max-instances <n>', 'max live instances of all services together, warm ones included', '32')
    .option(
      '--admin-token <token>',
      'the admin API needs Authorization: Bearer <token> (default: $TETHER_GATEWAY_ADMIN_TOKEN, else one generated into <--data>/admin.token)',
    )
    .option(
      '--insecure-open-admin',
      'no admin token: any local process may read every session key (logged as a warning)',
    )
    .option(
      '--isolation <mode>',
      'auto | namespaces | none: how instances are sandboxed (none by default: production runs on Kubernetes)',
      DRIVERS.isolation.default.gateway,
    )
    .option(
      '--session-store <kind>',
      'where sessions and instances are kept: memory (lost at restart) or redis (survive restarts, shared)',
      DRIVERS.sessionStore.default,
    )
    .option('--redis-url <url>', 'redis://[user:pass@]host:port/db for --session-store redis (or TETHER_REDIS_URL)')
    .option('--redis-prefix <prefix>', 'start of every Redis key, one per deployment sharing a Redis', 'tether:')
    .option(
      '--new-sessions-per-minute <n>',
      'new sessions per client address per minute, then 429 + Retry-After (0 = no limit; behind --trusted-proxies the address is from X-Forwarded-For)',
      '60',
    )
    .option(
      '--address-share <percent>',
      "percent of a service's capacity one client address keeps while other addresses wait for it; beyond it its sessions give way (100 = no share)",
      '50',
    )
    .option(
      '--gateway-id <id>',
      'this gateway in the session store; keep it across restarts (default: <hostname>-<port>)',
    )
    .option(
      '--data <dir>',
      'folder of claim.secret, session.secret and admin.token, generated on first start (0600); TETHER_CLAIM_SECRET, TETHER_SESSION_SECRET and --admin-token override them',
      '.tether/gateway',
    )
    .option(
      '--signed-session-keys',
      'services without tether.dev/signed-session-keys accept only keys the gateway issued',
    )
    .option('--secure-cookies', "every new session's Set-Cookie gets Secure (TLS ends in front of the gateway)")
    .option(
      '--trusted-proxies <list>',
      'IPs/CIDRs whose X-Forwarded-Proto: https makes the cookie Secure (comma-separated)',
    )
    .option(
      '--runtime <kind>',
      'where instances run: local (processes) or kubernetes (agent-sandbox claims)',
      DRIVERS.runtime.default,
    )
    .option('--kubeconfig <path>', 'kubernetes: kubeconfig file (default: KUBECONFIG, else in-cluster)')
    .option('--namespace <ns>', 'kubernetes: the namespace sandboxes run in', 'default')
    .option('--memory-url <url>', 'kubernetes: TETHER_URL given to sandboxes (the memory server)')
    .option('--audience <aud>', "kubernetes: audience of the sandboxes' projected token", 'tether')
    .option('--sandbox-service-account <name>', 'kubernetes: service account of sandbox pods', 'tether-sandbox')
    .option('--memory-namespace <ns>', 'kubernetes: namespace of the memory server (sandbox egress)', 'tether')
    .option('--kubernetes-timeout <duration>', 'kubernetes: timeout of each API call', '5s')
    .option(
      '--cluster-wait-timeout <duration>',
      'kubernetes: longest a request waits on the cluster (claim bound, sandbox Ready, resume) before 503 + Retry-After (TETHER_CLUSTER_WAIT_TIMEOUT; default: --queue-timeout)',
      process.env.TETHER_CLUSTER_WAIT_TIMEOUT || undefined,
    )
    .addOption(logFormatOption())
    .action(async (flags: GatewayFlags) => {
      // Every flag value is checked before anything is written or connected: a bad one exits 2 (usage).
      const values = gatewayFlagValues(flags);
      const log = commandLogger('tether-gateway', flags);
      // A bad --redis-url exits naming host and port, never the password. Redis connects in the background.
      const sessionStore = usage('--session-store', () => pickSessionStore(flags, log));
      const isolation = await pickIsolation({
        requested: values.isolation,
        why:
          values.isolation === 'none'
            ? 'the default of tether gateway, whose production home is Kubernetes'
            : 'asked for',
        hidden: [resolve(flags.data), ...(flags.stateDir ? [resolve(flags.stateDir)] : [])],
        dir: defaultSandboxDir(),
        log,
      });
      const secrets = loadDeploymentSecrets(flags.data);
      for (const file of secrets.created)
        log.info({ file }, 'generated a gateway secret (keep it: claim names depend on it)');
      const admin = loadAdminToken(values.adminToken, log);
      const setup = await pickRuntime(flags, { isolation, log, clock: systemClock });
      const kube = setup.kind === 'kubernetes';
      // The gateway owns the runtime and the session store from here: it closes them when it fails to start.
      const gateway = await startGateway({
        services: setup.services,
        runtime: setup.runtime,
        reloadServices: setup.reloadServices,
        port: values.port,
        host: flags.host,
        adminPort: values.adminPort,
        domain: flags.domain,
        queueTimeoutMs: values.queueTimeoutMs,
        startTimeoutMs: values.startTimeoutMs,
        // Only the Kubernetes runtime waits on a cluster; a local instance's start is bounded by --start-timeout.
        clusterWaitMs: kube ? values.clusterWaitMs : undefined,
        proxyTimeoutMs: values.proxyTimeoutMs,
        maxInstances: values.maxInstances,
        adminToken: admin.token,
        claimSecret: secrets.claimSecret,
        sessionSecret: secrets.sessionSecret,
        signedSessionKeys: flags.signedSessionKeys ?? false,
        secureCookies: flags.secureCookies ?? false,
        trustedProxies: flags.trustedProxies?.split(',') ?? [],
        sessionStore,
        gatewayId: values.gatewayId,
        newSessionsPerMinute: values.newSessionsPerMinute,
        addressShare: values.addressShare,
        log,
      });
      await printBanner(
        log,
        banner(`Tether session gateway is up at ${gateway.publicUrl}`, {
          gatewayUrl: gateway.publicUrl,
          adminUrl: gateway.adminUrl,
          adminTokenFile: admin.file,
          adminTokenGiven: admin.token !== undefined,
          adminOpen: admin.token === undefined,
          consoleUrl: `${gateway.adminUrl}/console/`,
          services: gateway.services,
          domain: flags.domain,
        }),
      );
      onShutdown(log, () => gateway.close());
      onReloadSignal(log, () => gateway.reload());
    });
}

/**
 * The flag values of `tether gateway`, checked.
 * @throws {CliError} exit 2 (usage) naming the first bad flag
 */
function gatewayFlagValues(flags: GatewayFlags) {
  parseRuntimeKind(flags.runtime);
  return {
    port: portFlag('--port', flags.port),
    adminPort: portFlag('--admin-port', flags.adminPort),
    queueTimeoutMs: durationFlag('--queue-timeout', flags.queueTimeout),
    startTimeoutMs: durationFlag('--start-timeout', flags.startTimeout),
    clusterWaitMs: positiveDurationFlag('--cluster-wait-timeout', flags.clusterWaitTimeout ?? flags.queueTimeout),
    proxyTimeoutMs: durationFlag('--proxy-timeout', flags.proxyTimeout),
    maxInstances: positiveFlag('--max-instances', flags.maxInstances),
    newSessionsPerMinute: countFlag('--new-sessions-per-minute', flags.newSessionsPerMinute),
    addressShare: percentFlag('--address-share', flags.addressShare),
    isolation: parseIsolation(flags.isolation),
    gatewayId: usage('--gateway-id', () => gatewayIdFromFlags(flags)),
    adminToken: adminTokenChoice(flags),
  };
}

/** This gateway's id in the session store: `--gateway-id`, else `<hostname>-<port>` (stable across restarts). */
function gatewayIdFromFlags(flags: Pick<GatewayFlags, 'gatewayId' | 'port'>): string {
  const id = flags.gatewayId ?? `${hostname()}-${flags.port}`;
  if (!/^[\w.:-]{1,100}$/.test(id))
    throw new Error(`--gateway-id: 1-100 of [A-Za-z0-9_.:-], got '${id.slice(0, 110)}'`);
  return id;
}
