import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { InstanceExit } from '../../../../src/runtime/runtime.ts';
import { waitFor } from '../../../gateway/helpers/harness.ts';
import { isolatedRuntime, probeSpec } from './helpers.ts';

// Serves on PORT; on SIGTERM works 300 ms more (as an agent giving its lease back would), then exits 7.
const STOPS_SLOWLY = [
  "require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.env.PORT), '127.0.0.1');",
  "process.on('SIGTERM', () => setTimeout(() => process.exit(7), 300));",
].join('\n');

describe('delete of an isolated instance', () => {
  it("lets the command's SIGTERM handler finish within the grace period (bubblewrap forwards no signal)", async (t) => {
    const rt = await isolatedRuntime(t);
    const exits = new Map<string, InstanceExit>();
    rt.onExit((name, exit) => exits.set(name, exit));
    const spec = probeSpec({ argv: ['node', '-e', STOPS_SLOWLY] });
    await rt.start(spec);
    await rt.delete(spec.name);
    await waitFor(`the exit of ${spec.name}`, () => exits.has(spec.name));
    assert.deepEqual(exits.get(spec.name), { code: 7, signal: null, requested: true });
  });

  it('still kills a command that ignores SIGTERM once the grace period is over', async (t) => {
    const rt = await isolatedRuntime(t);
    const exits = new Map<string, InstanceExit>();
    rt.onExit((name, exit) => exits.set(name, exit));
    const ignores = STOPS_SLOWLY.replace('setTimeout(() => process.exit(7), 300)', '{}');
    const spec = probeSpec({ argv: ['node', '-e', ignores] });
    await rt.start(spec);
    await rt.delete(spec.name);
    await waitFor(`the exit of ${spec.name}`, () => exits.has(spec.name));
    const exit = exits.get(spec.name);
    assert.ok(exit, 'the instance ended');
    assert.equal(exit.requested, true);
    assert.ok(exit.signal === 'SIGKILL' || exit.code === 137, `killed: ${JSON.stringify(exit)}`);
  });
});
