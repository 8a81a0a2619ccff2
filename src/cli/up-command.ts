/**
 * @module
 * `tether up`: the whole platform on this machine, no Kubernetes — memory server, session gateway
 * and the local identity authority between them. Reloads the manifests on SIGHUP; stops everything on SIGTERM/SIGINT.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { createLogger } from '../common/log.ts';
import { startLocalPlatform } from '../up/platform.ts';
import { loadRegistryOption } from './registry-option.ts';
import { onReloadSignal } from './reload-signal.ts';
import { onShutdown } from './shutdown.ts';

const EXAMPLES = resolve(import.meta.dirname, '../../examples');

interface UpFlags {
  data: string;
  services: string[];
  host: string;
  memoryPort: string;
  port: string;
  adminPort: string;
  domain: string;
  registry: string;
  signedSessionKeys?: boolean;
}

function port(text: string, flag: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`${flag} must be 0..65535: got ${text}`);
  return n;
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
    .option(
      '--signed-session-keys',
      'services without tether.dev/signed-session-keys accept only keys the gateway issued',
    )
    .action(async (flags: UpFlags) => {
      const log = createLogger({ name: 'tether-up' });
      const platform = await startLocalPlatform({
        dataDir: flags.data,
        services: flags.services,
        host: flags.host,
        memoryPort: port(flags.memoryPort, '--memory-port'),
        gatewayPort: port(flags.port, '--port'),
        adminPort: port(flags.adminPort, '--admin-port'),
        domain: flags.domain,
        defaultRegistry: loadRegistryOption(flags.registry),
        adminKey: process.env.TETHER_ADMIN_KEY,
        signedSessionKeys: flags.signedSessionKeys ?? false,
        log,
      });
      const gw = platform.gateway.publicUrl;
      process.stdout.write(
        [
          '',
          'Tether is up.',
          `  memory server   ${platform.memory.url}   (admin key: ${platform.memory.adminKeyFile ?? 'TETHER_ADMIN_KEY'})`,
          `  session gateway ${gw}   admin ${platform.gateway.adminUrl}/_tether/sessions`,
          `                  (admin token: ${platform.adminTokenFile}; send Authorization: Bearer <token>)`,
          '',
          'Try an agent with memory (same cookie = same session; it remembers across instances):',
          `  curl -s -H 'Host: memory-agent.default.${flags.domain}' -H 'Cookie: agent=alice' ${gw}/`,
          `  curl -s -H 'Host: ai-agent-pause.default.${flags.domain}' -H 'Cookie: test=11' ${gw}/`,
          '',
        ].join('\n'),
      );
      onShutdown(log, () => platform.close());
      onReloadSignal(log, () => platform.gateway.reload());
    });
}
