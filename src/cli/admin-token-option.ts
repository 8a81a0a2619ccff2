/**
 * @module
 * The admin token of `tether gateway`: secure by default. `--admin-token` (or TETHER_GATEWAY_ADMIN_TOKEN) when
 * given; else one generated once into `<--data>/admin.token` (0600, as `tether up` keeps its own), whose path is
 * printed and never its content; an open admin API only with `--insecure-open-admin`, logged as a warning.
 * The admin API lists every session key (`?reveal=keys`), so an open one lets any local process take over
 * any session. Called by gateway-command.ts.
 */
import { join } from 'node:path';
import type { Logger } from '../common/log.ts';
import { loadOrCreateSecret } from '../common/secret-file.ts';
import { CliError, EXIT } from './api-client.ts';

/** The flags (and environment) the admin token comes from. */
export interface AdminTokenFlags {
  adminToken?: string;
  insecureOpenAdmin?: boolean;
  /** The gateway's data folder (`--data`). */
  data: string;
}

/** Where the admin token comes from: given, a file in `--data`, or none (`--insecure-open-admin`). */
export type AdminTokenChoice = { kind: 'given'; token: string } | { kind: 'file'; file: string } | { kind: 'open' };

/**
 * Checks the admin-token flags (nothing is written here).
 * @throws {CliError} exit 2 for an empty token, or a token together with `--insecure-open-admin`
 */
export function adminTokenChoice(flags: AdminTokenFlags, env: NodeJS.ProcessEnv = process.env): AdminTokenChoice {
  const given = flags.adminToken ?? (env.TETHER_GATEWAY_ADMIN_TOKEN || undefined);
  if (given !== undefined && given.trim() === '') {
    throw new CliError('--admin-token: must not be empty (leave it out to have one generated)', EXIT.usage);
  }
  if (given !== undefined && flags.insecureOpenAdmin) {
    throw new CliError(
      '--insecure-open-admin: cannot be used with --admin-token or TETHER_GATEWAY_ADMIN_TOKEN (pick one)',
      EXIT.usage,
    );
  }
  if (given !== undefined) return { kind: 'given', token: given.trim() };
  if (flags.insecureOpenAdmin) return { kind: 'open' };
  return { kind: 'file', file: join(flags.data, 'admin.token') };
}

/**
 * The token the admin API requires (undefined: open), generating the token file on first start.
 * @returns the token and the file it is kept in (for the banner), if any
 */
export function loadAdminToken(choice: AdminTokenChoice, log: Logger): { token?: string; file?: string } {
  if (choice.kind === 'given') return { token: choice.token };
  if (choice.kind === 'open') {
    log.warn(
      'the gateway admin API is open (--insecure-open-admin): any local process can list every session key and act as that session',
    );
    return {};
  }
  const loaded = loadOrCreateSecret(choice.file);
  if (loaded.created) {
    log.info(
      { file: choice.file },
      'generated the gateway admin token (the admin API needs Authorization: Bearer <it>)',
    );
  }
  return { token: loaded.value, file: choice.file };
}
