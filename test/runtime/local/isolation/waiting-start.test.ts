import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { probeHost } from '../../../../src/runtime/local/isolation/host-probe.ts';
import { ask, isolatedRuntime, probeSpec } from './helpers.ts';

/** When `pid` started, in clock ticks since boot (/proc/<pid>/stat field 22). */
function startTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
}

/** A start time taken now: that of a process started now. */
function ticksNow(): number {
  return Number(
    spawnSync('sh', ['-c', 'cat /proc/self/stat'], { encoding: 'utf8' }).stdout.split(') ')[1]?.split(' ')[19],
  );
}

/** Pids of this process's children that are waiting launchers (bash named `tether-launcher`). */
function waitingLaunchers(): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && readFileSync(`/proc/${d}/cmdline`, 'utf8').includes('tether-launcher')) {
        out.push(Number(d));
      }
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The one waiting launcher, once it joined its cgroups. */
async function oneLauncher(): Promise<number> {
  for (let i = 0; i < 500; i++) {
    const found = waitingLaunchers();
    if (found.length === 1 && cgroupLines(found[0] as number).length >= 2) return found[0] as number;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`expected one waiting launcher in its cgroups, found ${waitingLaunchers().length} launchers`);
}

/** The lines of /proc/<pid>/cgroup that name an instance cgroup of ours (`…/tether/tth…`). */
function cgroupLines(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cgroup`, 'utf8')
    .split('\n')
    .filter((l) => /\/tether\/tth/.test(l));
}

describe('cold start from the spare slot', () => {
  it('runs in the launcher that was already waiting in its cgroups, and a new one waits for the next', async (t) => {
    const rt = await isolatedRuntime(t);
    const waiting = await oneLauncher();
    const joinedBefore = cgroupLines(waiting);
    const spec = probeSpec();
    const before = ticksNow();
    const inst = await rt.start(spec);
    assert.equal(inst.pid, waiting, 'the instance is the process that was waiting');
    assert.ok(startTicks(inst.pid as number) <= before, 'it was started before the start was asked for');
    assert.deepEqual(cgroupLines(inst.pid as number), joinedBefore, 'in the same cgroups');
    const who = await ask<{ pid: number; hostname: string }>(inst, '/whoami');
    assert.ok(who.pid < 10 && who.hostname === spec.name, 'inside its own PID and UTS namespaces');
    const next = await oneLauncher();
    assert.notEqual(next, waiting, 'the next spare slot has its own launcher');
    await rt.delete(spec.name);
  });

  it('without bash, starts as before: the spawned launcher joins the cgroups itself', async (t) => {
    const caps = await probeHost();
    const rt = await isolatedRuntime(t, { caps: { ...caps, tools: { ...caps.tools, bash: undefined } } });
    // Time for the spare slot to be made (refill after 50 ms, a few ip/nft runs), so the start takes it.
    await new Promise((r) => setTimeout(r, 400));
    const spec = probeSpec();
    const before = ticksNow();
    const inst = await rt.start(spec);
    assert.ok(startTicks(inst.pid as number) >= before, 'its launcher was spawned by this start');
    assert.deepEqual(waitingLaunchers(), [], 'no launcher waits for the next start either');
    assert.ok(cgroupLines(inst.pid as number).length >= 2, 'the instance is in its cgroups');
    assert.ok((await ask<{ pid: number }>(inst, '/whoami')).pid < 10, 'inside its own PID namespace');
    await rt.delete(spec.name);
  });
});

describe('waiting launchers at the edges', () => {
  it('a start refused for a NUL byte in an env value releases its sandbox, and the next start works', async (t) => {
    const rt = await isolatedRuntime(t);
    await oneLauncher();
    const bad = probeSpec({ env: { API_TOKEN: 'hunter2\u0000x' } });
    await assert.rejects(rt.start(bad), (err: Error) => {
      assert.match(err.message, /NUL byte/);
      assert.doesNotMatch(err.message, /hunter2/);
      return true;
    });
    const spec = probeSpec();
    const inst = await rt.start(spec);
    assert.ok((await ask<{ pid: number }>(inst, '/whoami')).pid < 10);
    await rt.delete(spec.name);
  });

  it('close() while the spare slot is being made leaves no launcher behind', async (t) => {
    const rt = await isolatedRuntime(t);
    // Its network takes 20-40 ms to make (ip, nft), so 10 ms in, close() finds the spare being made.
    await new Promise((r) => setTimeout(r, 10));
    await rt.close();
    for (let i = 0; i < 20; i++) {
      assert.deepEqual(waitingLaunchers(), [], `a launcher after close (check ${i})`);
      await new Promise((r) => setTimeout(r, 10));
    }
  });
});
