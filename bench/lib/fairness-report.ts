/**
 * @module
 * The tables of bench:fairness: one run's rows (tenant B's latency beside each kind of tenant A's
 * work, as a ratio to B's quiet p99), and the figures over several runs (medians and pooled samples);
 * the target is judged on the median ratio: a row of a run holds 3-300 of B's samples, so its p99 is close to its maximum, and one
 * scheduling hiccup of a 2-core machine decides a single run's verdict.
 */
import { fmt, median, summarize, table } from './stats.ts';

/** One row's time window: `ms` is A's mean time per request (0 for the quiet row), `sent` its requests. */
export interface RowWindow {
  name: string;
  from: number;
  to: number;
  ms: number;
  sent: number;
}

/** One of B's samples: `[sentAtEpochMs, latencyMs, kind, status]`. */
export type Sample = [number, number, string, number];

/** B's figures beside one row (ms); `ratio` is p99 over the quiet row's p99. */
export interface RowFigures {
  name: string;
  aMs: number;
  sent: number;
  n: number;
  errors: number;
  p50: number;
  p99: number;
  max: number;
  ratio: number;
  /** B's latencies beside the row (pooled over runs by `mediansTable`). */
  latencies: number[];
}

/** The target of every row but the quiet one: B's p99 at most 2x quiet and its max at most 150 ms. */
export const verdict = (ratio: number, max: number) => (ratio <= 2 && max <= 150 ? 'met' : 'MISSED');

/** B's figures for each window (the first is the quiet one). */
export function rowFigures(windows: readonly RowWindow[], samples: readonly Sample[]): RowFigures[] {
  let quietP99 = Number.NaN;
  return windows.map((w) => {
    const s = samples.filter(([at]) => at >= w.from && at <= w.to);
    const latencies = s.map(([, ms]) => ms);
    const lat = summarize(latencies);
    if (Number.isNaN(quietP99)) quietP99 = lat.p99;
    const errors = s.filter(([, , , status]) => status >= 400 || status === 0).length;
    return {
      name: w.name,
      aMs: w.ms,
      sent: w.sent,
      n: lat.count,
      errors,
      ...lat,
      ratio: lat.p99 / quietP99,
      latencies,
    };
  });
}

/** One run's table. */
export function runTable(rows: readonly RowFigures[]): string {
  const head = ['row (what tenant A sends)', 'A ms/req', 'x', 'B n', 'B p50', 'B p99', 'B max', 'p99/quiet', 'target'];
  return table([
    head,
    ...rows.map((r, i) => [
      r.name,
      i === 0 ? '' : fmt(r.aMs),
      i === 0 ? '' : String(r.sent),
      `${r.n}${r.errors ? ` (${r.errors} err)` : ''}`,
      fmt(r.p50),
      fmt(r.p99),
      fmt(r.max),
      i === 0 ? '1x' : `${fmt(r.ratio)}x`,
      i === 0 ? '' : verdict(r.ratio, r.max),
    ]),
  ]);
}

/**
 * The figures over runs (same rows in the same order): per row the median of B's p99 and of its ratio
 * to that run's quiet p99; B's samples of all runs pooled, their p90 and p99 and that p99's ratio to the
 * pooled quiet p99 (a row of one run holds 3-300 samples, all runs 5x as many); the worst max of any
 * run. The verdict is on the median ratio and the worst max, over the runs with a sample of B beside the
 * row (none: not met).
 */
export function mediansTable(runs: readonly (readonly RowFigures[])[]): string {
  const first = runs[0] ?? [];
  const pooled = first.map((_, i) => summarize(runs.flatMap((run) => (run[i] as RowFigures).latencies)));
  const quiet = pooled[0]?.p99 ?? Number.NaN;
  const head = [
    'row (what tenant A sends)',
    'B n',
    'median p99',
    'median p99/quiet',
    'pooled p90',
    'pooled p99',
    'pooled p99/quiet',
    'worst max',
    'target',
  ];
  return table([
    head,
    ...first.map((r, i) => {
      // A run in which B sent nothing beside the row (a row shorter than B's period) says nothing of it.
      const col = runs.map((run) => run[i] as RowFigures).filter((c) => c.n > 0);
      const ratio = median(col.map((c) => c.ratio));
      const worst = Math.max(...col.map((c) => c.max));
      const all = pooled[i] as ReturnType<typeof summarize>;
      return [
        r.name,
        String(all.count),
        fmt(median(col.map((c) => c.p99))),
        i === 0 ? '1x' : `${fmt(ratio)}x`,
        fmt(all.p90),
        fmt(all.p99),
        i === 0 ? '1x' : `${fmt(all.p99 / quiet)}x`,
        fmt(worst),
        i === 0 ? '' : verdict(ratio, worst),
      ];
    }),
  ]);
}
