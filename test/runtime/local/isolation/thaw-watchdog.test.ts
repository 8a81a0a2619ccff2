/**
 * The thaw watchdog writes what it was told when its process dies without closing it, and nothing after
 * `close()`. Runs a child process that owns the watchdog, with plain files standing in for freezer files.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { waitFor } from '../../../gateway/helpers/harness.ts';
import { openTempDir } from './helpers.ts';

const MODULE = resolve(import.meta.dirname, '../../../../src/runtime/local/isolation/thaw-watchdog.ts');

/** Starts a process that watches `files` (value THAWED), then closes the watchdog if `close`, then waits. */
async function owner(files: string[], close: boolean) {
  const code = `
    const { ThawWatchdog } = await import(${JSON.stringify(MODULE)});
    const w = new ThawWatchdog();
    for (const f of ${JSON.stringify(files)}) { w.watch(f, 'THAWED'); w.watch(f, 'AGAIN'); }
    if (${close}) w.close();
    console.log(String(w.pid ?? 0));
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(child.stdout, 'data')) as [Buffer];
  return { child, watchdog: Number(line.toString().trim()) };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('ThawWatchdog', () => {
  it('writes each watched file once when its owner is SIGKILLed, then exits', async (t) => {
    const dir = await openTempDir(t, 'tether-thaw-');
    const files = [join(dir, 'a.state'), join(dir, 'b state')];
    for (const f of files) writeFileSync(f, 'FROZEN');
    const { child, watchdog } = await owner([...files, join(dir, 'gone')], false);
    assert.ok(watchdog > 0, 'the watchdog runs');
    assert.equal(readFileSync(files[0] as string, 'utf8'), 'FROZEN', 'nothing written while the owner lives');
    child.kill('SIGKILL');
    await once(child, 'exit');
    await waitFor('the watchdog thawed both', () => files.every((f) => readFileSync(f, 'utf8') === 'THAWED'));
    await waitFor('the watchdog exited', () => !alive(watchdog));
  });

  it('writes nothing after close()', async (t) => {
    const dir = await openTempDir(t, 'tether-thaw-');
    const file = join(dir, 'a.state');
    writeFileSync(file, 'FROZEN');
    const { child } = await owner([file], true);
    child.kill('SIGKILL');
    await once(child, 'exit');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(readFileSync(file, 'utf8'), 'FROZEN');
  });
});
