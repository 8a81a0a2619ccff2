/**
 * `tether up`'s flags are all in the README's "`tether up` flags" table: a flag added to the command and
 * not documented fails here, naming it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { Command } from 'commander';
import { registerUpCommand } from '../../src/cli/up-command.ts';

const README = readFileSync(resolve(import.meta.dirname, '../../README.md'), 'utf8');

describe('tether up flags', () => {
  it('are each in the README table', () => {
    const program = new Command('tether');
    registerUpCommand(program);
    const up = program.commands.find((c) => c.name() === 'up');
    assert.ok(up);
    const flags = up.options.map((o) => o.long).filter((f): f is string => f !== undefined);
    assert.ok(flags.includes('--data') && flags.includes('--isolation'), flags.join(' '));
    const section = /### `tether up` flags\n([\s\S]*?)\n### /.exec(README)?.[1] ?? '';
    assert.ok(section.length > 0, 'README has the section');
    const missing = flags.filter((f) => !section.includes(`\`${f}`));
    assert.deepEqual(missing, [], 'flags of tether up missing from the README table');
  });
});
