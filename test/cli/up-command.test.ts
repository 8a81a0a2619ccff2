/**
 * `tether up`'s flags are all in docs/cli.md's "`tether up` flags" table: a flag added to the command and
 * not documented fails here, naming it.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { Command } from 'commander';
import { registerUpCommand } from '../../src/cli/up-command.ts';
import { runTether } from '../helpers/tether-cli.ts';

const CLI_DOC = readFileSync(resolve(import.meta.dirname, '../../docs/cli.md'), 'utf8');

describe('tether up flags', () => {
  it('are each in the docs/cli.md table', () => {
    const program = new Command('tether');
    registerUpCommand(program);
    const up = program.commands.find((c) => c.name() === 'up');
    assert.ok(up);
    const flags = up.options.map((o) => o.long).filter((f): f is string => f !== undefined);
    assert.ok(flags.includes('--data') && flags.includes('--isolation'), flags.join(' '));
    const section = /## `tether up` flags\n([\s\S]*?)\n## /.exec(CLI_DOC)?.[1] ?? '';
    assert.ok(section.length > 0, 'docs/cli.md has the section');
    const missing = flags.filter((f) => !section.includes(`\`${f}`));
    assert.deepEqual(missing, [], 'flags of tether up missing from the docs/cli.md table');
  });
});

describe('tether up', () => {
  for (const [flag, value, names] of [
    ['--port', 'abc', /--port: must be a port number \(0-65535\), got 'abc'/],
    ['--isolation', 'sometimes', /--isolation must be one of auto, namespaces, none/],
  ] as const) {
    it(`exits 2 on ${flag} ${value} before anything starts`, async (t) => {
      const dir = await mkdtemp(join(tmpdir(), 'tether-cli-up-'));
      t.after(() => rm(dir, { recursive: true, force: true }));
      const data = join(dir, 'data');
      const run = await runTether(['up', '--data', data, flag, value]);
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, names);
      assert.equal(existsSync(data), false, 'nothing written into --data');
    });
  }
});
