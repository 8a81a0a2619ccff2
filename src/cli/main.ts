/**
 * @module
 * The `tether` command line: one sub-command per file, registered here.
 * This is the only place that picks drivers (store, session store, runtime).
 */
import { Command } from 'commander';
import { registerExportCommands } from './export-command.ts';
import { registerGatewayCommand } from './gateway-command.ts';
import { registerMemoryCommand } from './memory-command.ts';
import { registerUpCommand } from './up-command.ts';

const program = new Command('tether')
  .description('Memory and sessions that outlive the sandbox')
  .version('0.1.0')
  .showHelpAfterError();

registerMemoryCommand(program);
registerGatewayCommand(program);
registerUpCommand(program);
registerExportCommands(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  process.stderr.write(`tether: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
