/**
 * bench:fairness `--loop-trace` (bench/lib/loop-trace.ts and loop-trace-hook.mjs): the hook, in a process
 * of its own, writes the loop's gaps and GC pauses; the figures per row count the gaps, full GCs and
 * scavenges of each window and which of B's slow requests were in flight across a gap or a full GC.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { RowWindow, Sample } from '../../bench/lib/fairness-report.ts';
import { type LoopEvent, loopRows, poolLoopRows, readLoopTrace } from '../../bench/lib/loop-trace.ts';

const dir = mkdtempSync(join(tmpdir(), 'tether-loop-trace-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const HOOK = new URL('../../bench/lib/loop-trace-hook.mjs', import.meta.url).href;

const windows: RowWindow[] = [
  { name: 'quiet (B alone)', from: 0, to: 1000, ms: 0, sent: 0 },
  { name: 'a 1 MiB import', from: 1000, to: 2000, ms: 500, sent: 2 },
];
const events: LoopEvent[] = [
  [500, 7, 'gap', 6, 1],
  [1100, 10, 'gap', 3, 7], // of its 10 ms, 3 on a core and 7 waiting for one
  [1500, 4, 'gap', 4, 0], // under GAP_COUNTED_MS: not counted, and holds no sample
  [1600, 8, 'major'],
  [1700, 2, 'minor'],
  [1750, 3, 'minor'],
];
const samples: Sample[] = [
  [1095, 20, 'whoami', 200], // in flight across the 10 ms gap
  [1300, 15, 'recall', 200], // slow, across nothing counted
  [1495, 12, 'remember', 200], // across the 4 ms gap only
  [1590, 12, 'recall', 200], // across the full GC
  [1800, 1, 'whoami', 200], // fast
];

describe('loopRows', () => {
  it("counts each window's gaps, full GCs and scavenges, and B's slow requests in flight across a gap or a full GC", () => {
    const [quiet, row] = loopRows(windows, samples, events, 10);
    assert.deepEqual(quiet, {
      name: 'quiet (B alone)',
      gaps: 1,
      gapMs: 7,
      longestGap: 7,
      gapRunMs: 6,
      gapWaitMs: 1,
      majors: 0,
      majorMs: 0,
      longestMajor: 0,
      minors: 0,
      longestMinor: 0,
      slow: 0,
      slowInGap: 0,
      windowMs: 1000,
      cpu: null,
    });
    assert.deepEqual(row, {
      name: 'a 1 MiB import',
      gaps: 1,
      gapMs: 10,
      longestGap: 10,
      gapRunMs: 3,
      gapWaitMs: 7,
      majors: 1,
      majorMs: 8,
      longestMajor: 8,
      minors: 2,
      longestMinor: 3,
      slow: 4,
      slowInGap: 2,
      windowMs: 1000,
      cpu: null,
    });
  });

  it('adds the runs up: counts and sums added, longest the longest', () => {
    const one = loopRows(windows, samples, events, 10);
    const two = loopRows(windows, samples, [...events, [1900, 30, 'gap', 25, 5]], 10);
    const pooled = poolLoopRows([one, two])[1];
    assert.equal(pooled?.gaps, 3);
    assert.equal(pooled?.gapMs, 50);
    assert.equal(pooled?.longestGap, 30);
    assert.equal(pooled?.gapRunMs, 31);
    assert.equal(pooled?.gapWaitMs, 19);
    assert.equal(pooled?.majors, 2);
    assert.equal(pooled?.slow, 8);
  });

  it("keeps each window's CPU shares and adds them up over runs", () => {
    const share = (loop: number) => ({ loop, serverNice0: 1, serverNiced: 2, clientA: 3, clientB: 4 });
    const one = loopRows(windows, samples, events, 10, [share(100), share(500)]);
    assert.deepEqual(one[1]?.cpu, share(500));
    const pooled = poolLoopRows([one, loopRows(windows, samples, events, 10, [share(50), share(700)])]);
    assert.deepEqual(pooled[1]?.cpu, { loop: 1200, serverNice0: 2, serverNiced: 4, clientA: 6, clientB: 8 });
    assert.equal(pooled[1]?.windowMs, 2000);
    const unread = poolLoopRows([one, loopRows(windows, samples, events, 10)]);
    assert.equal(unread[1]?.cpu, null, 'a run without shares leaves the pooled ones unknown');
  });

  it("says a gap's split is not known when the hook could not read it", () => {
    const [, row] = loopRows(windows, samples, [[1100, 10, 'gap', -1, -1]], 10);
    assert.equal(row?.gapMs, 10);
    assert.equal(row?.gapRunMs, -1);
    assert.equal(row?.gapWaitMs, -1);
  });
});

describe('readLoopTrace', () => {
  it('reads every whole line and skips one cut by an exit', () => {
    const file = join(dir, 'cut.ndjson');
    writeFileSync(file, '[1,7,"gap",5,2]\n[3,4.5,"major"]\n[5,6,"mi');
    assert.deepEqual(readLoopTrace(file), [
      [1, 7, 'gap', 5, 2],
      [3, 4.5, 'major'],
    ]);
  });
});

describe('loop-trace-hook.mjs', () => {
  it('writes a gap as long as a task that held the loop, and a full GC, by the exit', () => {
    const file = join(dir, 'hook.ndjson');
    // The interval timer cannot run while the loop is busy: the gap is at least the 80 ms held.
    const code = `
      setTimeout(() => {
        const t = performance.now();
        while (performance.now() - t < 80) {}
        setTimeout(() => { globalThis.gc(); setTimeout(() => process.exit(0), 20); }, 20);
      }, 20);`;
    execFileSync(process.execPath, ['--expose-gc', '--import', HOOK, '-e', code], {
      env: { ...process.env, TETHER_LOOP_TRACE_FILE: file },
    });
    const trace = readLoopTrace(file);
    const gaps = trace.filter((e) => e[2] === 'gap');
    const longest = gaps.reduce((a, b) => (b[1] > a[1] ? b : a));
    assert.ok(longest[1] >= 80, `longest gap ${longest[1]} ms`);
    // Busy, not asleep: the thread ran on a core or waited for one nearly all of the gap (schedstat).
    const [, ms, , run = -1, wait = -1] = longest;
    assert.ok(run >= 0 && wait >= 0, JSON.stringify(longest));
    assert.ok(run + wait >= 0.9 * (ms - 2), JSON.stringify(longest));
    assert.ok(
      trace.some((e) => e[2] === 'major'),
      JSON.stringify(trace),
    );
  });
});
