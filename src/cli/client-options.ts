/**
 * @module
 * The options every everyday CLI command shares: `--url`/`--key` for the memory server,
 * `--admin-url`/`--token` for the gateway admin API, and `--json`.
 */
import type { Command } from 'commander';

/** Adds `--url`, `--key` and `--json` (memory server commands). */
export function memoryClientOptions(command: Command): Command {
  return command
    .option('--url <url>', 'memory server URL (TETHER_URL)', process.env.TETHER_URL ?? 'http://127.0.0.1:8080')
    .option('--key <key>', 'API key (default: TETHER_KEY, else .tether/memory/admin.key)')
    .option('--json', 'print the API answer as JSON');
}

/** Adds `--admin-url`, `--token` and `--json` (gateway admin commands). */
export function gatewayClientOptions(command: Command): Command {
  return command
    .option(
      '--admin-url <url>',
      'gateway admin URL (TETHER_GATEWAY_ADMIN_URL)',
      process.env.TETHER_GATEWAY_ADMIN_URL ?? 'http://127.0.0.1:8082',
    )
    .option('--token <token>', 'admin token (default: TETHER_GATEWAY_ADMIN_TOKEN, else .tether/gateway/admin.token)')
    .option('--json', 'print the API answer as JSON');
}
