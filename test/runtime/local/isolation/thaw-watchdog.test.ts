/**
 * The thaw watchdog writes what it was told when its process dies without closing it, and nothing after
 * `close()`. Runs a child process that owns the watchdog, with plain files standing in for freezer files.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { waitFor } from '../../../gateway/helpers/harness.ts';
import { openTempDir, sessionMembers } from './helpers.ts';

const MODULE = resolve(import.meta.dirname, '../../../../src/runtime/local/isolation/thaw-watchdog.ts');

/** Starts a process that watches `files` (value THAWED), then closes the watchdog if `close`, then waits. */
async function owner(files: string[], close: boolean) {
  const code = `
    const { ThawWatchdog } = await import(${JSON.stringify(MODULE)});
    const w = new ThawWatchdog();
    for (const f of ${JSON.stringify(files)}) { w.watch(f, 'THAWED'); w.watch(f, 'AGAIN'); }
    console.log(String(w.pid ?? 0));
    // Give it time to read the line (and, were it to fork, to fork) before it is closed.
    if (${close}) { await new Promise((r) => setTimeout(r, 300)); w.close(); }
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(child.stdout, 'data')) as [Buffer];
  return { child, watchdog: Number(line.toString().trim()) };
}

/** Runs `owner` and SIGKILLs it after the test whatever happened. */
async function ownerFor(t: TestContext, files: string[], close: boolean) {
  const o = await owner(files, close);
  t.after(() => o.child.kill('SIGKILL'));
  return o;
}

describe('ThawWatchdog', () => {
  it('writes each watched file once when its owner is SIGKILLed, then exits', async (t) => {
    const dir = await openTempDir(t, 'tether-thaw-');
    const files = [join(dir, 'a.state'), join(dir, 'b state')];
    for (const f of files) writeFileSync(f, 'FROZEN');
    const { child, watchdog } = await ownerFor(t, [...files, join(dir, 'gone')], false);
    assert.ok(watchdog > 0, 'the watchdog runs');
    assert.equal(readFileSync(files[0] as string, 'utf8'), 'FROZEN', 'nothing written while the owner lives');
    child.kill('SIGKILL');
    await once(child, 'exit');
    await waitFor('the watchdog thawed both', () => files.every((f) => readFileSync(f, 'utf8') === 'THAWED'));
    await waitFor('the watchdog exited, with everything it started', () => sessionMembers(watchdog).length === 0);
  });

  it('close() ends the watchdog and everything it started, and nothing is written after', async (t) => {
    const dir = await openTempDir(t, 'tether-thaw-');
    const file = join(dir, 'a.state');
    writeFileSync(file, 'FROZEN');
    const { child, watchdog } = await ownerFor(t, [file], true);
    assert.ok(watchdog > 0, 'a watchdog was started before close()');
    await waitFor('no process left in its session', () => sessionMembers(watchdog).length === 0);
    child.kill('SIGKILL');
    await once(child, 'exit');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(readFileSync(file, 'utf8'), 'FROZEN');
  });
});
