/**
 * @module
 * `tether up`: the whole platform on this machine, no Kubernetes — memory server, session gateway
 * and the local identity authority between them. Reloads the manifests on SIGHUP; stops everything on SIGTERM/SIGINT.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { startLocalPlatform } from '../up/platform.ts';
import { banner, printBanner } from './banner.ts';
import { localPlatformDrivers, parseIsolation } from './drivers.ts';
import { portFlag, usage } from './flag-values.ts';
import { commandLogger, logFormatOption } from './log-option.ts';
import { loadRegistryOption } from './registry-option.ts';
import { onReloadSignal } from './reload-signal.ts';
import { onShutdown } from './shutdown.ts';

const EXAMPLES = resolve(import.meta.dirname, '../../examples');

interface UpFlags {
  logFormat: string;
  data: string;
  services: string[];
  host: string;
  memoryPort: string;
  port: string;
  adminPort: string;
  domain: string;
  registry: string;
  isolation?: string;
  signedSessionKeys?: boolean;
}

/** Registers `tether up`. */
export function registerUpCommand(program: Command): void {
  program
    .command('up')
    .description('run memory server + session gateway locally; instances get workload identity from the gateway')
    .option('--data <dir>', 'data folder (TETHER_DATA)', process.env.TETHER_DATA ?? '.tether')
    .option('--services <paths...>', 'Knative Service manifests (files or folders)', [
      resolve(EXAMPLES, 'services'),
      resolve(EXAMPLES, 'platform'),
    ])
    .option('--host <host>', 'address both servers listen on', '127.0.0.1')
    .option('--memory-port <n>', 'memory server port', '8080')
    .option('--port <n>', 'gateway public port', '8081')
    .option('--admin-port <n>', 'gateway admin port (always 127.0.0.1)', '8082')
    .option('--domain <domain>', 'hosts are <name>.<namespace>.<domain>', 'example.com')
    .option('--registry <name|file>', 'default registry for new tenants', process.env.TETHER_REGISTRY ?? 'personal')
    .option('--isolation <mode>', 'auto | namespaces | none: how instances are sandboxed (default: auto)')
    .option(
      '--signed-session-keys',
      'services without tether.dev/signed-session-keys accept only keys the gateway issued',
    )
    .addOption(logFormatOption())
    .action(async (flags: UpFlags) => {
      // Checked before anything starts: a bad value exits 2 (usage).
      const memoryPort = portFlag('--memory-port', flags.memoryPort);
      const gatewayPort = portFlag('--port', flags.port);
      const adminPort = portFlag('--admin-port', flags.adminPort);
      const defaultRegistry = usage('--registry', () => loadRegistryOption(flags.registry));
      const isolation = flags.isolation === undefined ? undefined : parseIsolation(flags.isolation);
      const log = commandLogger('tether-up', flags);
      const platform = await startLocalPlatform({
        dataDir: flags.data,
        services: flags.services,
        host: flags.host,
        memoryPort,
        gatewayPort,
        adminPort,
        domain: flags.domain,
        defaultRegistry,
        adminKey: process.env.TETHER_ADMIN_KEY,
        drivers: localPlatformDrivers({ isolation }),
        signedSessionKeys: flags.signedSessionKeys ?? false,
        log,
      });
      await printBanner(
        log,
        banner('Tether is up.', {
          memoryUrl: platform.memory.url,
          adminKeyFile: platform.memory.adminKeyFile,
          gatewayUrl: platform.gateway.publicUrl,
          adminUrl: platform.gateway.adminUrl,
          adminTokenFile: platform.adminTokenFile,
          consoleUrl: platform.consoleUrl,
          services: platform.services,
          domain: flags.domain,
          isolation: platform.isolation,
        }),
      );
      onShutdown(log, () => platform.close());
      onReloadSignal(log, () => platform.gateway.reload());
    });
}
