/**
 * @module
 * `tether gateway` — placeholder until the session gateway lands (issue 4); owned by the gateway work.
 */
import type { Command } from 'commander';

/** Registers `tether gateway`. */
export function registerGatewayCommand(program: Command): void {
  program
    .command('gateway')
    .description('session gateway (not built yet)')
    .action(() => {
      throw new Error('the session gateway is not built yet');
    });
}
