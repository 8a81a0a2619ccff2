import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { probeHost } from '../../../../src/runtime/local/isolation/host-probe.ts';
import { ask, isolatedRuntime, probeSpec } from './helpers.ts';

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
    const inst = await rt.start(spec);
    assert.equal(inst.pid, waiting, 'the instance is the process that was waiting');
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
    await new Promise((r) => setTimeout(r, 300)); // the spare slot is made meanwhile; no launcher comes with it
    assert.deepEqual(waitingLaunchers(), []);
    const spec = probeSpec();
    const inst = await rt.start(spec);
    assert.ok(cgroupLines(inst.pid as number).length >= 2, 'the instance is in its cgroups');
    assert.ok((await ask<{ pid: number }>(inst, '/whoami')).pid < 10, 'inside its own PID namespace');
    await rt.delete(spec.name);
  });
});
