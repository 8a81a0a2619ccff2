/**
 * @module
 * The whole machine's CPU time from /proc/stat, to say how much of it a phase left idle: when a phase
 * leaves none, a second server on the same cores cannot add throughput, whatever it is.
 */
import { readFileSync } from 'node:fs';

/** Jiffies of all CPUs since boot: in all, and idle (idle + iowait). */
export interface CpuTimes {
  total: number;
  idle: number;
}

/** Reads the `cpu` line of /proc/stat. */
export function cpuTimes(): CpuTimes {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const total = v.slice(0, 8).reduce((a, b) => a + b, 0); // user..steal; guest time is inside user already
  return { total, idle: (v[3] ?? 0) + (v[4] ?? 0) };
}

/** The share (0..100) of the machine's CPU time left idle between two readings. */
export function idlePercent(a: CpuTimes, b: CpuTimes): number {
  const total = b.total - a.total;
  return total > 0 ? (100 * (b.idle - a.idle)) / total : Number.NaN;
}

/** Runs `work` and says how much of the machine's CPU stayed idle meanwhile (0..100). */
export async function whileIdle<T>(work: () => Promise<T>): Promise<{ value: T; idle: number }> {
  const before = cpuTimes();
  const value = await work();
  return { value, idle: idlePercent(before, cpuTimes()) };
}
