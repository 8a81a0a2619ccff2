/**
 * bench:memory --baseline's report: the ratio this/baseline of each figure and the verdict on the figures held
 * to 10% (recall and search p99, remembers/s, peak RSS), in the direction each one is better.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { baselineReport, type SideResult, worseRows } from '../../bench/lib/memory-baseline-report.ts';
import type { Figures } from '../../bench/lib/memory-measure.ts';

function figures(over: Partial<Figures> = {}): Figures {
  return {
    recallP50: 0.5,
    recallP99: 1.5,
    recallRate: 5_000,
    searchP50: 1,
    searchP99: 2,
    searchHits: 20,
    searchZero: 0,
    remembers: 5_000,
    perCommit: 7,
    remembersWrk: Number.NaN,
    remembersMany: Number.NaN,
    rememberP99Many: Number.NaN,
    idleMany: Number.NaN,
    cpuPerRemember: Number.NaN,
    rememberP50: Number.NaN,
    rememberP99: Number.NaN,
    ...over,
  };
}

function side(f: Partial<Figures>[], over: Partial<SideResult> = {}): SideResult {
  return {
    sent: 1000,
    loadFailed: 0,
    loadSecs: 1,
    loadRate: 1000,
    loadRssMb: 200,
    loadPeakMb: 250,
    stressEndRssMb: 220,
    stress: 'loaded',
    dbMb: 10,
    figures: f.map(figures),
    startRssMb: 150,
    rssMb: 180,
    peakMb: 200,
    heapUsedMb: 30,
    errors: [],
    warnings: 0,
    firstWarning: '',
    ...over,
  };
}

const labels = { this: 'abc this', baseline: 'def base', store: 'SQLite' };
const line = (report: string, name: string) => report.split('\n').find((l) => l.includes(name)) ?? '';

describe('bench:memory --baseline report', () => {
  it('holds a figure within 10% as ok and shows the median ratio', () => {
    const report = baselineReport(
      1000,
      labels,
      side([{ recallP99: 1.6 }, { recallP99: 1.64 }, { recallP99: 9 }]),
      side([{}]),
    );
    assert.match(line(report, 'exact recall p99'), /1\.64\s+1\.60-9\.00\s+1\.50\s+1\.09x\s+ok$/);
    assert.deepEqual(worseRows(report), []);
  });

  it('calls a latency 11% higher, a rate 11% lower and a peak RSS 11% higher worse', () => {
    const report = baselineReport(
      1000,
      labels,
      side([{ searchP99: 2.22, remembers: 4_450 }], { loadPeakMb: 278 }),
      side([{ searchP99: 2, remembers: 5_000 }]),
    );
    assert.deepEqual(worseRows(report), [
      'text search p99 ms (1 client)',
      'remembers/s (8 clients, node:http driver)',
      'server peak RSS MB over load + 30 s phases (VmHWM)',
    ]);
  });

  it('holds wrk remembers/s when wrk ran, and a better figure is never worse', () => {
    const report = baselineReport(
      1000,
      labels,
      side([{ remembersWrk: 9_000, remembers: 100, recallP99: 0.1 }]),
      side([{ remembersWrk: 6_000, remembers: 5_000 }]),
    );
    assert.match(line(report, 'remembers/s (8 clients, wrk)'), /^\* .*1\.50x\s+ok$/);
    assert.match(line(report, 'node:http driver'), /^ {2}.*0\.020x$/, 'the client-bound row is shown, not held');
    assert.deepEqual(worseRows(report), []);
  });

  it('names both checkouts, the errors and the first warning of each side', () => {
    const report = baselineReport(
      2000,
      labels,
      side([{}], { errors: ['recall: 1/10 failed'], warnings: 3, firstWarning: '{"msg":"held"}' }),
      side([{}]),
    );
    assert.match(
      report,
      /^== 2,000 events, SQLite, 1 interleaved rounds \(medians\) ==\nthis: +abc this\nbaseline: def base/,
    );
    assert.match(report, /errors \(this\): recall: 1\/10 failed/);
    assert.match(report, /first log warning \(this\): \{"msg":"held"\}/);
    assert.match(report, /this: +loaded; 3 log warnings/);
  });
});
