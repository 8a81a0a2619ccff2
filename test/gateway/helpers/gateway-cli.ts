/**
 * @module
 * Runs `tether gateway` alone (a commander program with only that command), so e2e tests exercise the
 * real command without depending on the other commands' modules. Usage: `node --import tsx gateway-cli.ts gateway --services …`.
 */
import { Command } from 'commander';
import { registerGatewayCommand } from '../../../src/cli/gateway-command.ts';

const program = new Command('tether').showHelpAfterError();
registerGatewayCommand(program);
try {
  await program.parseAsync(process.argv);
} catch (err) {
  process.stderr.write(`tether: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
