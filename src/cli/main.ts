/**
 * @module
 * The `tether` command line: one sub-command per file, registered here, and the exit codes
 * (api-client.ts `EXIT`): a usage error exits 2, an API refusal the code of its status.
 * This is the only place that picks drivers (store, session store, runtime).
 */
import { Command, CommanderError } from 'commander';
import { CliError, EXIT } from './api-client.ts';
import { registerExportCommands } from './export-command.ts';
import { registerFactCommands } from './fact-commands.ts';
import { registerGatewayAdminCommands } from './gateway-admin-commands.ts';
import { registerGatewayCommand } from './gateway-command.ts';
import { registerKeysCommand } from './keys-command.ts';
import { registerMemoryCommand } from './memory-command.ts';
import { registerUpCommand } from './up-command.ts';

const program = new Command('tether')
  .description('Memory and sessions that outlive the sandbox')
  .version('0.1.0')
  .showHelpAfterError()
  // Subcommands inherit this: commander throws instead of exiting, so usage errors get their own code.
  .exitOverride();

registerMemoryCommand(program);
registerGatewayCommand(program);
registerUpCommand(program);
registerExportCommands(program);
registerKeysCommand(program);
registerFactCommands(program);
registerGatewayAdminCommands(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    // commander printed the message (or the help/version) already.
    process.exit(err.exitCode === 0 ? EXIT.ok : EXIT.usage);
  }
  process.stderr.write(`tether: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(err instanceof CliError ? err.exitCode : EXIT.failed);
}
