/**
 * @module
 * Which module registers which top-level `tether` command, so `main.ts` loads only the module of the command
 * being run (`tether recall` never loads the servers, `tether --version` loads none). A module keeps the
 * usual `registerXCommand(program)` style; a new top-level command is one more name here (a test compares
 * this table with what the modules register).
 */
import type { Command } from 'commander';

/** One command module: the top-level command names it registers, and how to load its register function. */
export interface CommandModule {
  names: readonly string[];
  load: () => Promise<(program: Command) => void>;
}

export const COMMAND_MODULES: readonly CommandModule[] = [
  { names: ['memory'], load: async () => (await import('./memory-command.ts')).registerMemoryCommand },
  { names: ['gateway'], load: async () => (await import('./gateway-command.ts')).registerGatewayCommand },
  { names: ['up'], load: async () => (await import('./up-command.ts')).registerUpCommand },
  { names: ['export', 'import'], load: async () => (await import('./export-command.ts')).registerExportCommands },
  { names: ['keys'], load: async () => (await import('./keys-command.ts')).registerKeysCommand },
  {
    names: ['recall', 'search', 'history', 'remember', 'forget'],
    load: async () => (await import('./fact-commands.ts')).registerFactCommands,
  },
  {
    names: ['sessions', 'instances', 'logs'],
    load: async () => (await import('./gateway-admin-commands.ts')).registerGatewayAdminCommands,
  },
];

/**
 * The modules a command line needs: the one that registers its first argument; none for `--version`;
 * all of them otherwise (help, `help <command>`, an unknown command: commander lists or suggests the rest).
 */
export function modulesFor(args: readonly string[]): readonly CommandModule[] {
  const first = args[0];
  if (first === '--version' || first === '-V') return [];
  const own = COMMAND_MODULES.find((m) => first !== undefined && m.names.includes(first));
  return own ? [own] : COMMAND_MODULES;
}
