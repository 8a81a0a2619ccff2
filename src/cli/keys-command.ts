/**
 * @module
 * `tether keys mint|list|revoke`: the memory server's admin key routes from the command line. The
 * minted key is printed once (as the API answers it once); lists never show secrets.
 */
import type { Command } from 'commander';
import { parseDuration } from '../common/durations.ts';
import { apiRequest, CliError, EXIT, type MemoryClientFlags, memoryKeyOf } from './api-client.ts';
import { memoryClientOptions } from './client-options.ts';
import { type Column, print, printRecord } from './output.ts';

/** A key as `GET /v1/keys` lists it. */
interface KeyRow {
  id: string;
  tenant: string;
  agent: string | null;
  admin: boolean;
  note: string | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
}

const KEY_COLUMNS: Column<KeyRow>[] = [
  { header: 'id', cell: (k) => k.id },
  { header: 'tenant', cell: (k) => k.tenant },
  { header: 'agent', cell: (k) => k.agent ?? (k.admin ? '(admin)' : null) },
  { header: 'created', cell: (k) => k.created_at },
  { header: 'expires', cell: (k) => k.expires_at ?? 'never' },
  { header: 'revoked', cell: (k) => k.revoked_at },
  { header: 'note', cell: (k) => k.note },
];

/** Registers `tether keys`. */
export function registerKeysCommand(program: Command): void {
  const keys = program.command('keys').description('admin: mint, list and revoke memory API keys');

  memoryClientOptions(keys.command('mint').description('mint a key (printed once)'))
    .requiredOption('--tenant <tenant>', "the key's tenant ('*' for a global admin key)")
    .option('--agent <agent>', 'an agent key for namespace tenant:agent (without it: an admin key of the tenant)')
    .option('--ttl <duration>', 'life of the key, e.g. 1h, 30d (default: no expiry)')
    .option('--note <text>', 'a note shown in lists')
    .action(async (flags: MemoryClientFlags & { tenant: string; agent?: string; ttl?: string; note?: string }) => {
      let ttlSeconds: number | undefined;
      if (flags.ttl !== undefined) {
        try {
          ttlSeconds = Math.ceil(parseDuration(flags.ttl) / 1000);
        } catch (err) {
          throw new CliError(`--ttl: ${(err as Error).message}`, EXIT.usage);
        }
      }
      const minted = (await apiRequest(flags.url, '/v1/keys', {
        method: 'POST',
        bearer: memoryKeyOf(flags),
        body: { tenant: flags.tenant, agent: flags.agent, ttl_seconds: ttlSeconds, note: flags.note },
      })) as Record<string, unknown>;
      printRecord(flags, minted);
    });

  memoryClientOptions(keys.command('list').description('list keys (never their secrets)'))
    .option('--all', 'include expired keys')
    .action(async (flags: MemoryClientFlags & { all?: boolean }) => {
      const bearer = memoryKeyOf(flags);
      const all: KeyRow[] = [];
      let after: string | undefined;
      do {
        const page = (await apiRequest(flags.url, '/v1/keys', {
          bearer,
          query: { limit: 1000, after, include_expired: flags.all ? 'true' : undefined },
        })) as { keys: KeyRow[]; next: string | null };
        all.push(...page.keys);
        after = page.next ?? undefined;
      } while (after);
      print(flags, { keys: all }, all, KEY_COLUMNS, '(no keys)');
    });

  memoryClientOptions(
    keys.command('revoke').description('revoke a key at once').argument('<id>', 'the 16-hex key id'),
  ).action(async (id: string, flags: MemoryClientFlags) => {
    await apiRequest(flags.url, `/v1/keys/${encodeURIComponent(id)}`, { method: 'DELETE', bearer: memoryKeyOf(flags) });
    printRecord(flags, { revoked: id });
  });
}
