/**
 * @module
 * The `tether` command line: one sub-command per file, loaded on demand (commands.ts), and the exit codes
 * (api-client.ts `EXIT`): a usage error exits 2, an API refusal the code of its status.
 * Drivers (store, session store, runtime, isolation) are picked in one place under it: drivers.ts.
 */
import { Command, CommanderError } from 'commander';
import { CliError, EXIT } from './api-client.ts';
import { modulesFor } from './commands.ts';

const program = new Command('tether')
  .description('Memory and sessions that outlive the sandbox')
  .version('0.1.0')
  .showHelpAfterError()
  // Subcommands inherit this: commander throws instead of exiting, so usage errors get their own code.
  .exitOverride();

// Only the module of the command being run is loaded (commands.ts): a start costs what that command needs.
for (const register of await Promise.all(modulesFor(process.argv.slice(2)).map((m) => m.load()))) register(program);

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
