import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, it } from 'node:test';
import { detectCgroups } from '../../../../src/runtime/local/isolation/cgroups.ts';
import type { InstanceExit } from '../../../../src/runtime/runtime.ts';
import { waitFor } from '../../../gateway/helpers/harness.ts';
import { ask, isolatedRuntime, probeSpec } from './helpers.ts';

type Count = { ticks: number; child: number; childConts: number };

describe('pause with the cgroup freezer', () => {
  it('holds still a child that traps SIGTSTP/SIGCONT, sends it no signal, and resumes it with its state', async (t) => {
    const rt = await isolatedRuntime(t);
    const spec = probeSpec();
    const inst = await rt.start(spec);
    await ask(inst, '/trap');
    let c0 = await ask<Count>(inst, '/count');
    for (let i = 0; i < 200 && c0.child < 3; i++) c0 = await ask<Count>(inst, '/count');
    assert.ok(c0.child >= 3, 'the child counts');
    const t0 = performance.now();
    await rt.pause(spec.name);
    // A request to a frozen instance gets no answer until it is thawed (the kernel still queues the connection).
    let answered = false;
    const pending = ask<Count>(inst, '/count').then((c) => {
      answered = true;
      return c;
    });
    // Real time must pass for a frozen process to show it did not run: there is no clock to inject into the kernel.
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(answered, false, 'a frozen instance answered');
    await rt.resume(spec.name);
    const c1 = await pending;
    const elapsedMs = performance.now() - t0;
    assert.ok(elapsedMs >= 600);
    assert.ok(c1.child >= c0.child, 'the child kept its state');
    // The child ticks every 10 ms when it runs: over >= 600 ms frozen it advanced by the few ticks around the pause.
    assert.ok(c1.child - c0.child < 20, `the child ran while paused: ${c0.child} -> ${c1.child} in ${elapsedMs} ms`);
    assert.ok(c1.ticks - c0.ticks < 20, `the app ran while paused: ${c0.ticks} -> ${c1.ticks}`);
    assert.equal(c1.childConts, 0, 'the freezer sends no SIGCONT');
    let c2 = await ask<Count>(inst, '/count');
    for (let i = 0; i < 200 && c2.child <= c1.child; i++) c2 = await ask<Count>(inst, '/count');
    assert.ok(c2.child > c1.child, 'the child counts again after resume');
  });
});

describe('resources.limits', () => {
  it('kills an instance that goes over its memory limit, and only it', async (t) => {
    const rt = await isolatedRuntime(t);
    const exits = new Map<string, InstanceExit>();
    rt.onExit((name, exit) => exits.set(name, exit));
    const hog = probeSpec({
      sandbox: { readOnlyPaths: [], limits: { memoryBytes: 128 * 2 ** 20 }, publicEgress: false },
    });
    const bystander = probeSpec();
    const inst = await rt.start(hog);
    const other = await rt.start(bystander);
    await assert.rejects(ask(inst, '/hog'), 'the hog answered: it was not stopped');
    await waitFor('the exit of the hog instance', () => exits.has(hog.name));
    const exit = exits.get(hog.name);
    assert.ok(exit, 'the hog instance ended');
    assert.equal(exit.requested, false);
    assert.ok(exit.code === 137 || exit.signal === 'SIGKILL', `killed: ${JSON.stringify(exit)}`);
    assert.equal(exits.has(bystander.name), false);
    assert.equal(typeof (await ask<Count>(other, '/count')).ticks, 'number', 'the other instance still answers');
  });

  it('puts a cpu limit and a pids limit on the instance; no cpu cgroup without a cpu limit', async (t) => {
    const layout = detectCgroups();
    assert.ok(layout?.cpu && layout.pids, 'this machine has cpu and pids controllers');
    const rt = await isolatedRuntime(t);
    const limited = probeSpec({
      sandbox: { readOnlyPaths: [], limits: { cpuMillicores: 250, pids: 64 }, publicEgress: false },
    });
    const plain = probeSpec();
    const a = await rt.start(limited);
    const b = await rt.start(plain);
    /** The folder of `controller` the instance's launcher is in, when it is one of the runtime's (else undefined). */
    const cgroupOf = (pid: number | null, controller: 'cpu' | 'pids') => {
      const lines = readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n');
      const line =
        lines.find((l) => l.split(':')[1]?.split(',').includes(controller)) ?? lines.find((l) => l.startsWith('0::'));
      const place = layout[controller];
      const dir = place && join(place.dir, basename(line?.split(':')[2] ?? ''));
      return dir && existsSync(join(dir, 'cgroup.procs')) && line?.includes(`/${basename(place.dir)}/`)
        ? dir
        : undefined;
    };
    const cpuA = cgroupOf(a.pid, 'cpu');
    assert.ok(cpuA, 'the limited instance is in a cpu cgroup of the runtime');
    assert.equal(cgroupOf(b.pid, 'cpu'), undefined, 'the other is in none');
    const quota = readFileSync(join(cpuA, layout.cpu.kind === 'v1' ? 'cpu.cfs_quota_us' : 'cpu.max'), 'utf8');
    assert.match(quota, /^25000\b/);
    const pidsMax = (spec: string | undefined) => readFileSync(join(spec ?? '', 'pids.max'), 'utf8').trim();
    assert.equal(pidsMax(cgroupOf(a.pid, 'pids')), '64');
    assert.equal(pidsMax(cgroupOf(b.pid, 'pids')), '1024', 'the default pids limit');
  });
});
