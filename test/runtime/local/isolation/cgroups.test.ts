import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  InstanceCgroup,
  parseCgroupLayout,
  removeCgroupParents,
} from '../../../../src/runtime/local/isolation/cgroups.ts';
import { waitFor } from '../../../gateway/helpers/harness.ts';

const HYBRID_MOUNTS = [
  '30 25 0:26 / /sys/fs/cgroup/freezer rw,relatime shared:9 - cgroup cgroup rw,freezer',
  '31 25 0:27 / /sys/fs/cgroup/memory rw,relatime shared:10 - cgroup cgroup rw,memory',
  '32 25 0:28 / /sys/fs/cgroup/pids rw,relatime shared:11 - cgroup cgroup rw,pids',
  '33 25 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:12 - cgroup cgroup rw,cpu,cpuacct',
  '34 25 0:30 / /sys/fs/cgroup/unified rw,relatime shared:13 - cgroup2 cgroup2 rw',
].join('\n');

describe('parseCgroupLayout()', () => {
  it('on a v1 machine, makes instance cgroups under this process’s own cgroup of each controller', () => {
    const own = '6:freezer:/\n4:memory:/jobs/42\n8:pids:/\n2:cpu,cpuacct:/\n0::/';
    const layout = parseCgroupLayout(HYBRID_MOUNTS, own, []);
    assert.deepEqual(layout, {
      freezer: { kind: 'v1', dir: '/sys/fs/cgroup/freezer/tether' },
      memory: { kind: 'v1', dir: '/sys/fs/cgroup/memory/jobs/42/tether' },
      pids: { kind: 'v1', dir: '/sys/fs/cgroup/pids/tether' },
      cpu: { kind: 'v1', dir: '/sys/fs/cgroup/cpu,cpuacct/tether' },
    });
  });

  it('on a v2-only machine, uses the unified hierarchy for the freezer and the enabled controllers', () => {
    const mounts = '30 25 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate';
    const layout = parseCgroupLayout(mounts, '0::/user.slice', ['cpu', 'memory', 'pids']);
    const v2 = { kind: 'v2', dir: '/sys/fs/cgroup/tether' };
    assert.deepEqual(layout, { freezer: v2, memory: v2, pids: v2, cpu: v2 });
  });
});

/** The cgroup2 mount of this machine (hybrid machines mount it at /sys/fs/cgroup/unified). */
function v2Mount(): string {
  const m = /^\S+ \S+ \S+ \S+ (\S+) .* - cgroup2 /m.exec(readFileSync('/proc/self/mountinfo', 'utf8'));
  assert.ok(m?.[1], 'this test needs a cgroup2 hierarchy mounted (every kernel since 4.5 has one)');
  return m[1];
}

describe('InstanceCgroup with the v2 freezer (cgroup.freeze)', () => {
  it('freezes a process tree at once and thaws it; then removes the cgroup', async (t) => {
    const name = `test-${process.pid}-${Date.now()}`;
    const layout = { freezer: { kind: 'v2' as const, dir: `${v2Mount()}/tether-test-${process.pid}` } };
    const cg = new InstanceCgroup(layout, name);
    const child = spawn('sh', ['-c', `echo $$ > ${cg.procsFiles[0]}; exec sleep 30`], { stdio: 'ignore' });
    t.after(async () => {
      child.kill('SIGKILL');
      await cg.remove();
      removeCgroupParents(layout);
    });
    await new Promise((r) => child.once('spawn', r));
    await waitFor('the child in its cgroup', () => cg.pids().length > 0);
    assert.deepEqual(cg.pids(), [child.pid]);
    await cg.freeze();
    assert.match(readFileSync(`${cg.procsFiles[0]?.replace('cgroup.procs', 'cgroup.events')}`, 'utf8'), /^frozen 1$/m);
    await cg.thaw();
    assert.match(readFileSync(`${cg.procsFiles[0]?.replace('cgroup.procs', 'cgroup.events')}`, 'utf8'), /^frozen 0$/m);
    assert.equal(cg.signal('SIGKILL'), 1);
  });
});
