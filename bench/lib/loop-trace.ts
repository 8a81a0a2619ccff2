/**
 * @module
 * What the server's event loop did during each row of bench:fairness (`--loop-trace`), from the lines
 * `loop-trace-hook.mjs` wrote in the server: its gaps (the loop held by a long task, a GC pause or a wait
 * for a core; of their time, how much the loop's thread ran and how much it waited for a core), its full
 * GCs and scavenges, and how many of tenant B's slow requests (over twice the quiet p99) were in flight
 * across a gap of `GAP_COUNTED_MS` or more, or a full GC. Earlier sessions built this as throw-away hooks
 * to find where B's time goes; it is a flag now.
 */
import { readFileSync } from 'node:fs';
import type { CpuShare } from './cpu-by-thread.ts';
import type { RowWindow, Sample } from './fairness-report.ts';
import { fmt, table } from './stats.ts';

/**
 * One line of the trace: `[startEpochMs, ms, kind]`, kind `minor`, `major`, `incremental` or `weakcb`;
 * a gap is `[startEpochMs, ms, 'gap', runMs, waitMs]`: of its ms, those the loop's thread ran on a core
 * and those it waited, ready, for one (-1 where the hook could not read them).
 */
export type LoopEvent = [number, number, string] | [number, number, 'gap', number, number];

/** Gaps counted in a row (ms): a small request takes ~1-3 ms, so a gap this long doubles it. */
export const GAP_COUNTED_MS = 6;

/** What the loop did during one row. */
export interface RowLoop {
  name: string;
  /** Gaps of `GAP_COUNTED_MS` or more: how many, their sum and the longest (ms). */
  gaps: number;
  gapMs: number;
  longestGap: number;
  /** Of those gaps' ms: the loop's thread on a core, and ready but waiting for one (-1: not known). */
  gapRunMs: number;
  gapWaitMs: number;
  /** Full (mark-compact) GC pauses: how many, their sum and the longest (ms). */
  majors: number;
  majorMs: number;
  longestMajor: number;
  /** Scavenges: how many and the longest (ms). */
  minors: number;
  longestMinor: number;
  /** B's samples over `slowMs`, and of them those in flight across a counted gap or a full GC. */
  slow: number;
  slowInGap: number;
  /** The row's length, and who ran on the cores during it (ms; null when not read). */
  windowMs: number;
  cpu: CpuShare | null;
}

/** The trace file's events (a line cut by the server's exit is skipped). */
export function readLoopTrace(file: string): LoopEvent[] {
  const events: LoopEvent[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    try {
      const e = JSON.parse(line) as unknown;
      if (Array.isArray(e) && (e.length === 3 || e.length === 5)) events.push(e as LoopEvent);
    } catch {
      // the last line, cut
    }
  }
  return events;
}

/** Whether `[from, to]` and the event's span overlap. */
const overlaps = (from: number, to: number, [at, ms]: LoopEvent) => at <= to && at + ms >= from;

/**
 * The loop's figures for each row window.
 * @param slowMs B's samples slower than this are the slow ones (the bench gives twice the quiet p99)
 */
export function loopRows(
  windows: RowWindow[],
  samples: Sample[],
  events: LoopEvent[],
  slowMs: number,
  cpu: CpuShare[] = [],
): RowLoop[] {
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  return windows.map((w, i) => {
    const inRow = events.filter(([at]) => at >= w.from && at <= w.to);
    const counted = inRow.filter((e) => e[2] === 'gap' && e[1] >= GAP_COUNTED_MS);
    const fullGcs = inRow.filter((e) => e[2] === 'major');
    const gaps = counted.map((e) => e[1]);
    const majors = fullGcs.map((e) => e[1]);
    const minors = inRow.filter((e) => e[2] === 'minor').map((e) => e[1]);
    // A gap's run or wait ms (fields 3, 4) added up; -1 when one gap's were not read.
    const split = (field: 3 | 4) =>
      counted.some((e) => (e[field] ?? -1) < 0) ? -1 : sum(counted.map((e) => e[field] ?? 0));
    const holds = [...counted, ...fullGcs];
    const slow = samples.filter(([at, ms]) => at >= w.from && at <= w.to && ms > slowMs);
    const most = (xs: number[]) => (xs.length === 0 ? 0 : Math.max(...xs));
    return {
      name: w.name,
      gaps: gaps.length,
      gapMs: sum(gaps),
      longestGap: most(gaps),
      gapRunMs: split(3),
      gapWaitMs: split(4),
      majors: majors.length,
      majorMs: sum(majors),
      longestMajor: most(majors),
      minors: minors.length,
      longestMinor: most(minors),
      slow: slow.length,
      slowInGap: slow.filter(([at, ms]) => holds.some((e) => overlaps(at, at + ms, e))).length,
      windowMs: w.to - w.from,
      cpu: cpu[i] ?? null,
    };
  });
}

/** Two CPU shares added, key by key (null when either is not known). */
function addCpu(a: CpuShare | null, b: CpuShare | null): CpuShare | null {
  if (!a || !b) return null;
  const keys = Object.keys(a) as (keyof CpuShare)[];
  return Object.fromEntries(keys.map((k) => [k, a[k] + b[k]])) as unknown as CpuShare;
}

/** The rows of several runs added up (counts and sums added, longest the longest). */
export function poolLoopRows(runs: RowLoop[][]): RowLoop[] {
  return (runs[0] ?? []).map((first, i) => {
    const all = runs.map((r) => r[i] as RowLoop);
    const add = (k: keyof RowLoop) => all.reduce((s, r) => s + (r[k] as number), 0);
    const most = (k: keyof RowLoop) => Math.max(...all.map((r) => r[k] as number));
    return {
      name: first.name,
      gaps: add('gaps'),
      gapMs: add('gapMs'),
      longestGap: most('longestGap'),
      gapRunMs: all.some((r) => r.gapRunMs < 0) ? -1 : add('gapRunMs'),
      gapWaitMs: all.some((r) => r.gapWaitMs < 0) ? -1 : add('gapWaitMs'),
      majors: add('majors'),
      majorMs: add('majorMs'),
      longestMajor: most('longestMajor'),
      minors: add('minors'),
      longestMinor: most('longestMinor'),
      slow: add('slow'),
      slowInGap: add('slowInGap'),
      windowMs: add('windowMs'),
      cpu: all.map((r) => r.cpu).reduce(addCpu),
    };
  });
}

/** Who ran on the cores during each row, as a table (ms of run time; 2 cores give twice the row's length). */
export function cpuTable(rows: RowLoop[]): string {
  const cell = (r: RowLoop, k: keyof CpuShare) => (r.cpu ? fmt(r.cpu[k]) : '-');
  return table([
    [
      'row (what tenant A sends)',
      'row ms',
      'B server loop',
      'its nice-0 threads',
      'its niced threads',
      'A client',
      'B client',
    ],
    ...rows.map((r) => [
      r.name,
      fmt(r.windowMs),
      cell(r, 'loop'),
      cell(r, 'serverNice0'),
      cell(r, 'serverNiced'),
      cell(r, 'clientA'),
      cell(r, 'clientB'),
    ]),
  ]);
}

/** The loop's figures as a table. */
export function loopTable(rows: RowLoop[]): string {
  return table([
    [
      'row (what tenant A sends)',
      `gaps >=${GAP_COUNTED_MS}`,
      'gap ms',
      'longest',
      'on a core',
      'waiting',
      'full GCs',
      'GC ms',
      'longest',
      'scavenges',
      'longest',
      'B slow',
      'in a gap',
    ],
    ...rows.map((r) => [
      r.name,
      String(r.gaps),
      fmt(r.gapMs),
      fmt(r.longestGap),
      r.gapRunMs < 0 ? '-' : fmt(r.gapRunMs),
      r.gapWaitMs < 0 ? '-' : fmt(r.gapWaitMs),
      String(r.majors),
      fmt(r.majorMs),
      fmt(r.longestMajor),
      String(r.minors),
      fmt(r.longestMinor),
      String(r.slow),
      String(r.slowInGap),
    ]),
  ]);
}
