/**
 * bench:fairness `--loop-trace`'s CPU shares (bench/lib/cpu-by-thread.ts): each thread's run time read from
 * /proc, and the time between two readings split into the server's loop, its other threads at nice 0 and
 * at a lower priority, and the two clients.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type CpuSnapshot, cpuBetween, threadRuns } from '../../bench/lib/cpu-by-thread.ts';

describe('threadRuns', () => {
  it("reads this process's threads, its main thread's run time growing as it works", () => {
    const before = threadRuns(process.pid).get(process.pid)?.ns ?? -1;
    let x = 0;
    for (let i = 0; i < 5e6; i++) x += i % 7;
    const after = threadRuns(process.pid).get(process.pid)?.ns ?? -1;
    assert.ok(before >= 0 && after > before, `${before} -> ${after} (${x})`);
  });

  it('reads nothing of a process that is gone', () => {
    assert.equal(threadRuns(2 ** 22 + 1).size, 0);
  });
});

describe('cpuBetween', () => {
  it("splits B's server into its loop, its nice-0 threads and its niced ones; a new thread counts from 0", () => {
    const ms = 1e6;
    const before: CpuSnapshot = {
      serverPid: 10,
      server: new Map([
        [10, { ns: 100 * ms, nice: 0 }],
        [11, { ns: 10 * ms, nice: 0 }],
        [12, { ns: 5 * ms, nice: 10 }],
      ]),
      clientA: 40 * ms,
      clientB: 7 * ms,
    };
    const after: CpuSnapshot = {
      serverPid: 10,
      server: new Map([
        [10, { ns: 350 * ms, nice: 0 }],
        [11, { ns: 30 * ms, nice: 0 }],
        [12, { ns: 25 * ms, nice: 10 }],
        [13, { ns: 8 * ms, nice: 10 }],
      ]),
      clientA: 140 * ms,
      clientB: 9 * ms,
    };
    assert.deepEqual(cpuBetween(before, after), {
      loop: 250,
      serverNice0: 20,
      serverNiced: 28,
      clientA: 100,
      clientB: 2,
    });
  });
});
