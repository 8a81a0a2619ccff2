/**
 * @module
 * bench:memory's `--baseline` report of one size: each figure of this tree's memory server beside the other
 * checkout's, the ratio this/baseline, and a verdict for the figures issue 21 holds to 10% (recall and search
 * p99, remembers/s) and the peak RSS: `ok` within 10% (or better), `WORSE` past it.
 */
import { CLIENTS, type Figures } from './memory-measure.ts';
import { fmt, median, table } from './stats.ts';

/** Everything measured of one side at one size. */
export interface SideResult {
  /** Statements sent over HTTP, requests that failed, seconds spent loading (its own chunks only). */
  sent: number;
  loadFailed: number;
  loadSecs: number;
  loadRate: number;
  loadRssMb: number;
  /** VmHWM over the load and the 10 s phases. */
  loadPeakMb: number;
  stressEndRssMb: number;
  stress: string;
  /** Size of tether.db (SQLite; NaN on PostgreSQL). */
  dbMb: number;
  figures: Figures[];
  startRssMb: number;
  rssMb: number;
  /** VmHWM of the restarted server over the rounds. */
  peakMb: number;
  heapUsedMb: number;
  errors: string[];
  /** Log lines at warn level or above (e.g. the event-loop lag warnings of a newer tree). */
  warnings: number;
  /** The first of them (a JSON log line, cut). */
  firstWarning: string;
}

/** The tolerance issue 21 and issue 24 allow against the baseline. */
const TOLERANCE = 0.1;

type Better = 'lower' | 'higher';

/** The size's table: this, its range over rounds, baseline, its range, ratio, verdict. */
export function baselineReport(
  size: number,
  labels: { this: string; baseline: string; store: string },
  a: SideResult,
  b: SideResult,
): string {
  const withWrk = a.figures.some((x) => Number.isFinite(x.remembersWrk));
  const med = (r: SideResult, f: keyof Figures) => median(r.figures.map((x) => x[f]));
  const range = (r: SideResult, f: keyof Figures) => {
    const v = r.figures.map((x) => x[f]).filter(Number.isFinite);
    return v.length > 1 ? `${fmt(Math.min(...v))}-${fmt(Math.max(...v))}` : '';
  };
  const verdict = (x: number, y: number, better: Better) => {
    if (!(Number.isFinite(x) && Number.isFinite(y) && y > 0)) return '-';
    const worse = better === 'lower' ? x > y * (1 + TOLERANCE) : x < y * (1 - TOLERANCE);
    return worse ? 'WORSE by >10%' : 'ok';
  };
  const ratio = (x: number, y: number) => (Number.isFinite(x) && Number.isFinite(y) && y > 0 ? `${fmt(x / y)}x` : '-');
  /** A row; `held` marks the figures a regression check holds (verdict shown). */
  const fig = (name: string, f: keyof Figures, better: Better, held = false): string[] => {
    const x = med(a, f);
    const y = med(b, f);
    return [
      held ? `* ${name}` : `  ${name}`,
      fmt(x),
      range(a, f),
      fmt(y),
      range(b, f),
      ratio(x, y),
      held ? verdict(x, y, better) : '',
    ];
  };
  const one = (name: string, x: number, y: number, better?: Better): string[] => [
    better ? `* ${name}` : `  ${name}`,
    fmt(x),
    '',
    fmt(y),
    '',
    ratio(x, y),
    better ? verdict(x, y, better) : '',
  ];
  const rows: string[][] = [
    ['metric (* held to 10%)', 'this', 'range', 'baseline', 'range', 'this/base', 'verdict'],
    fig('exact recall p50 ms (1 client)', 'recallP50', 'lower'),
    fig('exact recall p99 ms (1 client)', 'recallP99', 'lower', true),
    fig(`exact recalls/s (${CLIENTS} clients)`, 'recallRate', 'higher'),
    fig('text search p50 ms (1 client)', 'searchP50', 'lower'),
    fig('text search p99 ms (1 client)', 'searchP99', 'lower', true),
    fig('search results/query', 'searchHits', 'higher'),
    fig(`remembers/s (${CLIENTS} clients, wrk)`, 'remembersWrk', 'higher', withWrk),
    fig(`remembers/s (${CLIENTS} clients, node:http driver)`, 'remembers', 'higher', !withWrk),
    fig('remembers per commit (group commit)', 'perCommit', 'higher'),
    fig('server CPU us per remember (all threads, wrk)', 'cpuPerRemember', 'lower'),
    fig(`remember p99 ms (${CLIENTS} connections, wrk)`, 'rememberP99', 'lower'),
    one('load statements/s over HTTP (its own chunks)', a.loadRate, b.loadRate),
    one('server RSS MB after loading', a.loadRssMb, b.loadRssMb),
    one('server peak RSS MB over load + 30 s phases (VmHWM)', a.loadPeakMb, b.loadPeakMb, 'lower'),
    one('server RSS MB at restart (no request yet)', a.startRssMb, b.startRssMb),
    one('server RSS MB after the rounds', a.rssMb, b.rssMb),
    one('server peak RSS MB over the rounds (VmHWM)', a.peakMb, b.peakMb, 'lower'),
    one('server V8 heap used MB after the rounds', a.heapUsedMb, b.heapUsedMb),
    ...(Number.isFinite(a.dbMb) ? [one('tether.db MB', a.dbMb, b.dbMb)] : []),
  ];
  const head =
    `== ${fmt(size)} events, ${labels.store}, ${a.figures.length} interleaved rounds (medians) ==\n` +
    `this:     ${labels.this}\nbaseline: ${labels.baseline}`;
  const notes = [
    `this:     ${a.stress}; ${a.warnings} log warnings`,
    `baseline: ${b.stress}; ${b.warnings} log warnings`,
    withWrk
      ? 'remembers/s: wrk is the figure held (the node:http driver bounds the rate itself).'
      : 'remembers/s: wrk is not installed (apt-get install wrk): the node:http driver row is held; it is client-bound.',
  ];
  for (const [name, r] of [
    ['this', a],
    ['baseline', b],
  ] as const) {
    if (r.firstWarning) notes.push(`first log warning (${name}): ${r.firstWarning}`);
    if (r.errors.length > 0) notes.push(`errors (${name}): ${r.errors.join('; ')}`);
  }
  return `${head}\n${table(rows)}\n${notes.join('\n')}`;
}

/** The held rows of a report that came out WORSE (for the summary line). */
export function worseRows(report: string): string[] {
  return report
    .split('\n')
    .filter((l) => l.includes('WORSE'))
    .map((l) => l.replace(/\s{2,}.*/, '').replace(/^\* /, ''));
}
