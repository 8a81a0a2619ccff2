/**
 * @module
 * `tether gateway`: parses flags, starts the session gateway (src/gateway/gateway.ts), reloads its
 * manifests on SIGHUP and stops it cleanly on SIGINT/SIGTERM (no instance left behind). A manifest error is printed with its file,
 * document and field and the command exits non-zero before serving anything.
 */
import type { Command } from 'commander';
import { parseDuration } from '../common/durations.ts';
import { createLogger } from '../common/log.ts';
import { loadDeploymentSecrets } from '../gateway/deployment-secrets.ts';
import { startGateway } from '../gateway/gateway.ts';
import { onReloadSignal } from './reload-signal.ts';
import { gatewayIdFromFlags, sessionStoreFromFlags } from './session-store-option.ts';
import { onShutdown } from './shutdown.ts';

/** Flags of `tether gateway`, as commander gives them. */
interface GatewayFlags {
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
  host: string;
  startTimeout: string;
  proxyTimeout: string;
  adminToken?: string;
  maxInstances: string;
  stateDir?: string;
  data: string;
  signedSessionKeys?: boolean;
  secureCookies?: boolean;
  trustedProxies?: string;
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
      'require Authorization: Bearer <token> on the admin API (default: $TETHER_GATEWAY_ADMIN_TOKEN)',
    )
    .option(
      '--session-store <kind>',
      'where sessions and instances are kept: memory (lost at restart) or redis (survive restarts, shared)',
      'memory',
    )
    .option('--redis-url <url>', 'redis://[user:pass@]host:port/db for --session-store redis (or TETHER_REDIS_URL)')
    .option('--redis-prefix <prefix>', 'start of every Redis key, one per deployment sharing a Redis', 'tether:')
    .option(
      '--new-sessions-per-minute <n>',
      'new sessions per client address per minute, then 429 + Retry-After (0 = no limit; behind --trusted-proxies the address is from X-Forwarded-For)',
      '60',
    )
    .option(
      '--gateway-id <id>',
      'this gateway in the session store; keep it across restarts (default: <hostname>-<port>)',
    )
    .option(
      '--data <dir>',
      'folder of claim.secret and session.secret, generated on first start (0600); TETHER_CLAIM_SECRET and TETHER_SESSION_SECRET override them',
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
    .action(async (flags: GatewayFlags) => {
      const log = createLogger({ name: 'tether-gateway' });
      const sessionStore = sessionStoreFromFlags(flags, log);
      const gatewayId = gatewayIdFromFlags(flags);
      const secrets = loadDeploymentSecrets(flags.data);
      for (const file of secrets.created)
        log.info({ file }, 'generated a gateway secret (keep it: claim names depend on it)');
      const gateway = await startGateway({
        services: flags.services,
        port: port('--port', flags.port),
        host: flags.host,
        adminPort: port('--admin-port', flags.adminPort),
        domain: flags.domain,
        queueTimeoutMs: duration('--queue-timeout', flags.queueTimeout),
        startTimeoutMs: duration('--start-timeout', flags.startTimeout),
        proxyTimeoutMs: duration('--proxy-timeout', flags.proxyTimeout),
        stateDir: flags.stateDir,
        maxInstances: positive('--max-instances', flags.maxInstances),
        adminToken: flags.adminToken ?? (process.env.TETHER_GATEWAY_ADMIN_TOKEN || undefined),
        claimSecret: secrets.claimSecret,
        sessionSecret: secrets.sessionSecret,
        signedSessionKeys: flags.signedSessionKeys ?? false,
        secureCookies: flags.secureCookies ?? false,
        trustedProxies: flags.trustedProxies?.split(',') ?? [],
        sessionStore,
        gatewayId,
        newSessionsPerMinute: count('--new-sessions-per-minute', flags.newSessionsPerMinute),
        log,
      });
      onShutdown(log, () => gateway.close());
      onReloadSignal(log, () => gateway.reload());
    });
}

function port(flag: string, text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n > 65535) throw new Error(`${flag}: must be a port number (0-65535), got '${text}'`);
  return n;
}

function count(flag: string, text: string): number {
  if (!/^\d{1,9}$/.test(text)) throw new Error(`${flag}: must be an integer >= 0, got '${text.slice(0, 40)}'`);
  return Number(text);
}

function positive(flag: string, text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1) throw new Error(`${flag}: must be a positive integer, got '${text}'`);
  return n;
}

function duration(flag: string, text: string): number {
  try {
    return parseDuration(text);
  } catch (err) {
    throw new Error(`${flag}: ${(err as Error).message}`);
  }
}
