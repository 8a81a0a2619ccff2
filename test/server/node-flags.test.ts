/**
 * The servers' Node flags (src/server/node-flags.ts, the memory bound) are what `bin/tether` runs
 * with: its shebang carries them (`env -S`), and the script runs as an executable with that shebang.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SERVER_NODE_FLAGS } from '../../src/server/node-flags.ts';
import { TETHER_BIN as BIN, fromSource } from '../helpers/tether-cli.ts';

describe('server node flags', () => {
  it('are on the shebang of bin/tether', () => {
    const first = readFileSync(BIN, 'utf8').split('\n')[0];
    assert.equal(first, `#!/usr/bin/env -S node ${SERVER_NODE_FLAGS.join(' ')}`);
  });

  it('reach the process when bin/tether runs as an executable', (t) => {
    // A preloaded script (NODE_OPTIONS --require) prints the flags node was started with.
    const dir = mkdtempSync(join(tmpdir(), 'tether-flags-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const probe = join(dir, 'probe.cjs');
    writeFileSync(probe, "process.stderr.write('EXECARGV ' + JSON.stringify(process.execArgv) + '\\n');\n");
    const res = spawnSync(BIN, ['--help'], {
      encoding: 'utf8',
      env: fromSource({ ...process.env, NODE_OPTIONS: `--require ${probe}` }),
    });
    assert.equal(res.status, 0, res.stderr);
    const argv = JSON.parse(/EXECARGV (.*)/.exec(res.stderr)?.[1] ?? '[]') as string[];
    for (const flag of SERVER_NODE_FLAGS) assert.ok(argv.includes(flag), `${flag} in ${JSON.stringify(argv)}`);
  });
});
