/**
 * @module
 * The table of `bench:memory -- --store postgres` for one size: each figure on SQLite, on PostgreSQL
 * with one replica (and its ratio to SQLite), with two replicas sharing the load (and its ratio to
 * one), and of LangGraph's PostgresStore on the same database (Tether's ratio to it); the targets of
 * issue 12 (at 10^6 events) and the peak RSS bound of issue 9.
 */
import type { Figures } from './memory-measure.ts';
import { CLIENTS } from './memory-measure.ts';
import { MANY, type PostgresSizeResult, type TwoReplicaFigures } from './memory-postgres.ts';
import type { SizeResult } from './memory-sqlite.ts';
import { fmt, median, table } from './stats.ts';

/** Issue 12's targets at 10^6 events, and issue 9's memory bound. */
export const POSTGRES_TARGETS = { recallP99: 10, searchP99: 40, remembers: 3_000, twoReplicas: 1.5, rssMb: 300 };
const T = POSTGRES_TARGETS;

const ratio = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${fmt(a / b)}x` : '-');
const check = (ok: boolean) => (ok ? 'ok' : 'MISSED');

/** The SQLite / PostgreSQL / LangGraph table of one size. */
export function postgresReport(size: number, sqlite: SizeResult | null, r: PostgresSizeResult): string {
  const med = (list: readonly Figures[] | undefined, f: keyof Figures) => median((list ?? []).map((x) => x[f]));
  const med2 = (f: keyof TwoReplicaFigures) => median(r.two.map((x) => x[f]));
  const withWrk = r.one.some((x) => Number.isFinite(x.remembersWrk));
  const atTarget = size >= 1_000_000;
  /** metric, sqlite, pg 1, pg/sqlite, pg 2, 2/1, langgraph, pg/langgraph, target, ok */
  const row = (
    name: string,
    f: keyof Figures,
    o: { two?: keyof TwoReplicaFigures; lg?: keyof Figures; target?: [string, (v: number) => boolean] } = {},
  ): string[] => {
    const sq = med(sqlite?.tether, f);
    const one = med(r.one, f);
    const two = o.two ? med2(o.two) : Number.NaN;
    const lg = o.lg ? med(r.langgraph, o.lg) : Number.NaN;
    const target = o.target;
    return [
      name,
      fmt(sq),
      fmt(one),
      ratio(one, sq),
      fmt(two),
      ratio(two, one),
      fmt(lg),
      ratio(one, lg),
      target?.[0] ?? '',
      target && atTarget ? check(target[1](one)) : '',
    ];
  };
  const rememberTarget: [string, (v: number) => boolean] = [`>= ${fmt(T.remembers)}`, (v) => v >= T.remembers];
  // The capacity figures held against the targets: wrk with MANY connections (8 closed-loop clients
  // measure a write's latency, ~10 ms of round trips and WAL flush, more than what a replica takes).
  const withMany = r.one.some((x) => Number.isFinite(x.remembersMany));
  const headline = withMany ? 'remembersMany' : withWrk ? 'remembersWrk' : 'remembers';
  const oneRemembers = med(r.one, headline);
  const twoRemembers = med2(headline);
  const memRow = (name: string, sq: number, pgv: number, bound: boolean): string[] => [
    name,
    fmt(sq),
    fmt(pgv),
    ratio(pgv, sq),
    '',
    '',
    '',
    '',
    bound ? `<= ${T.rssMb}` : '',
    bound ? check(pgv <= T.rssMb && (!Number.isFinite(sq) || sq <= T.rssMb)) : '',
  ];
  /** A row of one replica against two: their figures (when `values`), the ratio and the 2/1 target (when `target`). */
  const pairRow = (name: string, one: number, two: number, o: { values: boolean; target: boolean }): string[] => [
    name,
    '',
    o.values ? fmt(one) : '',
    '',
    o.values ? fmt(two) : '',
    o.target ? ratio(two, one) : '',
    '',
    '',
    o.target ? `>= ${fmt(T.twoReplicas)}x` : '',
    o.target && atTarget ? check(two / one >= T.twoReplicas) : '',
  ];
  const c = r.capped;
  const rows: string[][] = [
    [
      'metric',
      'sqlite',
      'pg 1 replica',
      'pg/sqlite',
      'pg 2 replicas',
      '2/1',
      'LangGraph PG',
      'tether pg/LangGraph',
      'target',
      '',
    ],
    row('exact recall p50 ms (1 client)', 'recallP50', { lg: 'recallP50' }),
    row('exact recall p99 ms (1 client)', 'recallP99', {
      lg: 'recallP99',
      target: [`<= ${T.recallP99}`, (v) => v <= T.recallP99],
    }),
    row(`exact recalls/s (${CLIENTS} clients)`, 'recallRate', { two: 'recallRate', lg: 'recallRate' }),
    row('text search p50 ms (1 client)', 'searchP50', { lg: 'searchP50' }),
    row('text search p99 ms (1 client)', 'searchP99', {
      lg: 'searchP99',
      target: [`<= ${T.searchP99}`, (v) => v <= T.searchP99],
    }),
    row('search results/query', 'searchHits', { lg: 'searchHits' }),
    row(`remembers/s (${MANY} connections in all, wrk)`, 'remembersMany', {
      two: 'remembersMany',
      lg: 'remembersMany',
      target: headline === 'remembersMany' ? rememberTarget : undefined,
    }),
    row(`remember p99 ms (${MANY} connections, wrk)`, 'rememberP99Many', {
      two: 'rememberP99Many',
      lg: 'rememberP99Many',
    }),
    row(`machine CPU idle % during the ${MANY}-connection run`, 'idleMany', { two: 'idleMany' }),
    row(`remembers/s (${CLIENTS} connections in all, wrk)`, 'remembersWrk', {
      two: 'remembersWrk',
      lg: 'remembers',
      target: headline === 'remembersWrk' ? rememberTarget : undefined,
    }),
    row(`remembers/s (${CLIENTS} clients in all, node:http driver)`, 'remembers', {
      two: 'remembers',
      lg: 'remembers',
      target: headline === 'remembers' ? rememberTarget : undefined,
    }),
    row('remembers per commit (group commit)', 'perCommit', { two: 'perCommit' }),
    row('server CPU us per remember (wrk)', 'cpuPerRemember'),
    row(`remember p99 ms (${CLIENTS} connections, wrk)`, 'rememberP99', { two: 'rememberP99', lg: 'rememberP99' }),
    pairRow('remembers/s, two replicas vs one', oneRemembers, twoRemembers, { values: false, target: true }),
    ...(c
      ? [
          pairRow(
            `remembers/s, replicas capped at ${c.millicores}m each (wrk, ${MANY})`,
            median(c.one),
            median(c.two),
            {
              values: true,
              target: true,
            },
          ),
          pairRow('machine CPU idle %, capped replicas', median(c.idleOne), median(c.idleTwo), {
            values: true,
            target: false,
          }),
        ]
      : []),
    memRow('server RSS MB after loading over HTTP', sqlite?.loadRssMb ?? Number.NaN, r.loadRssMb, false),
    memRow(
      'server RSS MB after 10 s each recall/search/remember',
      sqlite?.stressEndRssMb ?? Number.NaN,
      r.stressEndRssMb,
      false,
    ),
    memRow('server peak RSS MB over load + those 30 s (VmHWM)', sqlite?.loadPeakMb ?? Number.NaN, r.loadPeakMb, true),
    memRow('server peak RSS MB, whole run of the server (VmHWM)', sqlite?.peakMb ?? Number.NaN, r.peakMb, true),
  ];
  const head =
    `== ${fmt(size)} events (PostgreSQL holds ${fmt(r.events)} events, database ${fmt(r.dbMb)} MB; ` +
    `loaded over HTTP in ${fmt(r.loadSecs)} s at ${fmt(r.loadRate)} statements/s` +
    (sqlite ? `, SQLite in ${fmt(sqlite.loadSecs)} s at ${fmt(sqlite.loadRate)}/s` : '') +
    `; LangGraph bulk-loaded in ${fmt(r.langgraphLoadSecs)} s) ==`;
  const notes = [
    `pg 2 replicas: the same clients in all, half on each replica (node:http 4 + 4, wrk ${CLIENTS / 2} + ${CLIENTS / 2} and ${MANY / 2} + ${MANY / 2}).`,
    `remembers/s held against the target: wrk with ${MANY} connections (with ${CLIENTS}, a replica waits on each write's round trips and WAL flush).`,
    `LangGraph PG: PostgresStore.get / search({ query }) / put from ${CLIENTS} (and ${MANY}) concurrent callers in the bench process, one pool;`,
    `              its text search runs to_tsvector on every item of the namespace (no index), so it gets a few queries in 8 s.`,
    `tether pg/LangGraph: Tether's one-replica figure over LangGraph's (latencies: lower is better; rates: higher is better).`,
    ...(r.stress ? [`memory phase (pg replica A): ${r.stress}`] : []),
    ...(sqlite?.stress ? [`memory phase (sqlite): ${sqlite.stress}`] : []),
  ];
  const errors = [...(sqlite?.errors ?? []), ...r.errors];
  if (errors.length > 0) notes.push(`errors: ${errors.join('; ')}`);
  return `${head}\n${table(rows)}\n${notes.join('\n')}`;
}
