/**
 * The table of command modules (src/cli/commands.ts) against what the modules register: main.ts loads a
 * module only for the names the table gives it, so a name missing there would be an unknown command.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Command } from 'commander';
import { COMMAND_MODULES, modulesFor } from '../../src/cli/commands.ts';

describe('tether command modules', () => {
  it('name exactly the top-level commands each module registers', async () => {
    for (const m of COMMAND_MODULES) {
      const program = new Command('tether');
      (await m.load())(program);
      assert.deepEqual(
        program.commands.map((c) => c.name()),
        m.names,
      );
    }
  });

  it('name each command once', () => {
    const names = COMMAND_MODULES.flatMap((m) => m.names);
    assert.deepEqual(names, [...new Set(names)]);
  });

  it('load only the module of the command run, none for --version, all for help or an unknown command', () => {
    const recall = modulesFor(['recall', 'user']);
    assert.equal(recall.length, 1);
    assert.ok(recall[0]?.names.includes('recall'));
    assert.deepEqual(modulesFor(['memory', '--port', '0'])[0]?.names, ['memory']);
    assert.deepEqual(modulesFor(['--version']), []);
    assert.deepEqual(modulesFor(['-V']), []);
    for (const args of [[], ['--help'], ['help', 'recall'], ['recal']]) assert.equal(modulesFor(args), COMMAND_MODULES);
  });
});
