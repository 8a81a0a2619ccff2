/**
 * @module
 * `tether sessions [end ID]`, `tether instances [delete NAME]` and `tether logs <instance>`: the gateway admin
 * API (`/_tether/*`, 127.0.0.1) from the command line. Session keys are the session cookies themselves,
 * so the API (and so these tables) shows a short prefix of each unless `--reveal-keys` asks for them;
 * `--json` (for scripts) prints the API's answer unchanged. `end` and `delete` take their `--admin-url`,
 * `--token` and `--json` from the parent command (commander gives the parent those flags wherever they stand).
 */
import type { Command } from 'commander';
import { apiRequest, type GatewayClientFlags, gatewayTokenOf } from './api-client.ts';
import { gatewayClientOptions } from './client-options.ts';
import { countFlag } from './flag-values.ts';
import { type Column, print, printRecord } from './output.ts';

interface SessionRow {
  id: string;
  key_prefix: string;
  key?: string;
  service: string;
  instance: string;
  claim?: string;
  state: string;
  last_active: string;
  expires_at: string | null;
  idle_deadline?: string | null;
}

interface InstanceRow {
  name: string;
  service: string;
  state: string;
  pid: number | null;
  sessions: string[];
  warm: boolean;
}

interface LogLine {
  time: string;
  stream: 'stdout' | 'stderr';
  line: string;
}

const SESSION_COLUMNS: Column<SessionRow>[] = [
  { header: 'id', cell: (s) => s.id },
  { header: 'session', cell: (s) => s.key ?? s.key_prefix },
  { header: 'service', cell: (s) => s.service },
  { header: 'instance', cell: (s) => s.instance },
  { header: 'agent', cell: (s) => s.claim },
  { header: 'state', cell: (s) => s.state },
  { header: 'last active', cell: (s) => s.last_active },
  { header: 'idle deadline', cell: (s) => s.idle_deadline },
  { header: 'expires', cell: (s) => s.expires_at ?? 'never' },
];

const INSTANCE_COLUMNS: Column<InstanceRow>[] = [
  { header: 'name', cell: (i) => i.name },
  { header: 'service', cell: (i) => i.service },
  { header: 'state', cell: (i) => i.state },
  { header: 'pid', cell: (i) => i.pid },
  { header: 'use', cell: (i) => (i.warm ? 'warm' : i.sessions.length > 0 ? 'bound' : 'free') },
  { header: 'sessions', cell: (i) => i.sessions },
];

function admin(flags: GatewayClientFlags, path: string, method = 'GET'): Promise<unknown> {
  return apiRequest(flags.adminUrl, path, { method, bearer: gatewayTokenOf(flags) });
}

/** Registers `tether sessions`, `tether instances` and `tether logs`. */
export function registerGatewayAdminCommands(program: Command): void {
  const sessions = gatewayClientOptions(program.command('sessions').description('live gateway sessions'))
    .option('--service <name>', 'only this service')
    .option('--reveal-keys', 'show whole session keys (each is the session cookie: a bearer secret)')
    .action(async (flags: GatewayClientFlags & { service?: string; revealKeys?: boolean }) => {
      const all = (await admin(flags, `/_tether/sessions${flags.revealKeys ? '?reveal=keys' : ''}`)) as SessionRow[];
      const rows = flags.service ? all.filter((s) => s.service === flags.service) : all;
      print(flags, rows, rows, SESSION_COLUMNS, '(no sessions)');
    });
  sessions
    .command('end')
    .description('end a session as an idle delete would: its next request starts a new one on a new instance')
    .argument('<id>', 'session id (the ID column of tether sessions, or more of it)')
    .configureHelp({ showGlobalOptions: true })
    .action(async (id: string, _own: unknown, cmd: Command) => {
      const flags = cmd.optsWithGlobals<GatewayClientFlags & { service?: string }>();
      const query = flags.service ? `?service=${encodeURIComponent(flags.service)}` : '';
      const ended = (await admin(flags, `/_tether/sessions/${encodeURIComponent(id)}${query}`, 'DELETE')) as Record<
        string,
        unknown
      >;
      printRecord(flags, ended);
    });

  const instances = gatewayClientOptions(program.command('instances').description('live gateway instances'))
    .option('--service <name>', 'only this service')
    .action(async (flags: GatewayClientFlags & { service?: string }) => {
      const all = (await admin(flags, '/_tether/instances')) as InstanceRow[];
      const rows = flags.service ? all.filter((i) => i.service === flags.service) : all;
      print(flags, rows, rows, INSTANCE_COLUMNS, '(no instances)');
    });
  instances
    .command('delete')
    .description('delete an instance and end its sessions (their next request gets a new instance)')
    .argument('<name>', 'instance name (see tether instances)')
    .configureHelp({ showGlobalOptions: true })
    .action(async (name: string, _own: unknown, cmd: Command) => {
      const flags = cmd.optsWithGlobals<GatewayClientFlags>();
      const deleted = (await admin(flags, `/_tether/instances/${encodeURIComponent(name)}`, 'DELETE')) as Record<
        string,
        unknown
      >;
      printRecord(flags, deleted);
    });

  gatewayClientOptions(program.command('logs').description("an instance's last output lines (stdout and stderr)"))
    .argument('<instance>', 'instance name (see tether instances)')
    .option('--stderr', 'only stderr')
    .option('-n, --lines <n>', 'only the last n lines')
    .action(async (name: string, flags: GatewayClientFlags & { stderr?: boolean; lines?: string }) => {
      const last = flags.lines === undefined ? undefined : countFlag('-n/--lines', flags.lines);
      let lines = (await admin(flags, `/_tether/instances/${encodeURIComponent(name)}/logs`)) as LogLine[];
      if (flags.stderr) lines = lines.filter((l) => l.stream === 'stderr');
      // Not slice(-last): slice(-0) is the whole list.
      if (last !== undefined) lines = lines.slice(Math.max(0, lines.length - last));
      if (flags.json) return print(flags, lines, [], []);
      for (const l of lines) process.stdout.write(`${l.time} ${l.stream === 'stderr' ? 'ERR' : 'OUT'} ${l.line}\n`);
    });
}
