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
    /** A snapshot of server 10: each thread as [tid, run ms, nice]; the clients' run ms. */
    const snapshot = (threads: [number, number, number][], clientA: number, clientB: number): CpuSnapshot => ({
      serverPid: 10,
      server: new Map(threads.map(([tid, ms, nice]) => [tid, { ns: ms * 1e6, nice }])),
      clientA: clientA * 1e6,
      clientB: clientB * 1e6,
    });
    const before = snapshot(
      [
        [10, 100, 0],
        [11, 10, 0],
        [12, 5, 10],
      ],
      40,
      7,
    );
    const after = snapshot(
      [
        [10, 350, 0],
        [11, 30, 0],
        [12, 25, 10],
        [13, 8, 10],
      ],
      140,
      9,
    );
    assert.deepEqual(cpuBetween(before, after), {
      loop: 250,
      serverNice0: 20,
      serverNiced: 28,
      clientA: 100,
      clientB: 2,
    });
  });
});
