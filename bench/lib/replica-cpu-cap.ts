/**
 * @module
 * Caps a replica's CPU for `bench:memory -- --store postgres --replica-cpu M`: the process (all its
 * threads) goes into a cpu cgroup of its own with a CFS quota of M thousandths of a core, as a pod's
 * `resources.limits.cpu` would. Two capped replicas on this 2-core machine then compare as replicas on
 * nodes of their own do, each with its share, instead of two processes taking the same cores from each
 * other and from PostgreSQL. Needs root and a cpu controller (the isolation code's cgroups.ts).
 */
import { writeFileSync } from 'node:fs';
import { detectCgroups, InstanceCgroup } from '../../src/runtime/local/isolation/cgroups.ts';

/** A capped process; `release` removes its cgroup once the process is gone. */
export interface CpuCap {
  release(): Promise<void>;
}

/** Puts `pid` under a quota of `millicores`. */
export function capCpu(pid: number, millicores: number, name: string): CpuCap {
  const cpu = detectCgroups()?.cpu;
  if (!cpu) throw new Error('--replica-cpu needs root and a cpu cgroup controller');
  const cgroup = new InstanceCgroup({ cpu }, `bench-${name}-${process.pid}`);
  cgroup.applyLimits({ cpuMillicores: millicores });
  for (const f of cgroup.procsFiles) writeFileSync(f, String(pid));
  return { release: () => cgroup.remove() };
}
