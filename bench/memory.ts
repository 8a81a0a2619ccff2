/**
 * @module
 * bench:memory — the memory server over HTTP at 10^5 and 10^6 events. On SQLite (the default) side by
 * side with raw better-sqlite3 on a copy of the same database; with `--store postgres`, SQLite, one and
 * two PostgreSQL replicas, and LangGraph's PostgresStore on the same database, side by side.
 *
 * For each size it starts the server in a child process and loads synthetic events (see
 * `lib/memory-data.ts`) over HTTP (`lib/http-loader.ts`: batches of 500 statements, 4 requests in
 * flight), then runs 10 s each of recall, search and remember with 8 clients (`lib/memory-stress.ts`)
 * and reads the server's RSS after the load, at the end and its peak: the memory target. Then it
 * measures (`lib/memory-measure.ts`): exact recall latency (1 client) and throughput (8 clients), text
 * search latency (1 client, 1-2 word queries that hit), remembers/s (8 clients, new facts in the loaded
 * namespace; with wrk when installed, see lib/wrk-remember.ts, and with the node:http driver of
 * lib/http-load.ts, which is client-bound: wrk's figure is the one held against the target), and the
 * server's RSS. SQLite: `lib/memory-sqlite.ts`; PostgreSQL: `lib/memory-postgres.ts`, which starts its
 * own PostgreSQL (initdb in a temp folder, a free port, fsync on) unless `--postgres-url` names one.
 * Each figure is the median over the rounds. Loopback only; temp folders are removed.
 *
 * Flags (environment equivalents in brackets):
 *   --store sqlite|postgres      what to measure (default sqlite)
 *   --events 100000,1000000      event counts to load, ascending; loading is incremental [BENCH_SIZES]
 *   --rounds 3                   rounds per measurement (median reported) [BENCH_ROUNDS]
 *   --postgres-url URL           an empty database to use instead of starting PostgreSQL; the bench
 *                                writes into it (tables of Tether, schema langgraph) and leaves it
 *   --pool-size 10               connections of each PostgreSQL replica
 *   --without-sqlite             with --store postgres: skip the SQLite column (faster)
 *   --replica-cpu 500            with --store postgres: also one and two replicas each capped at 500
 *                                thousandths of a core (a cpu cgroup, as pods' limits.cpu; needs root)
 *   --baseline <checkout>        this tree's server beside another checkout's (e.g. main before a change: a
 *                                `git worktree add --detach` with its node_modules), same data, same run
 *                                (lib/memory-baseline.ts): both run as `node <SERVER_NODE_FLAGS> <checkout>/bin/tether
 *                                memory` from their own sources, each on its own store (SQLite folder; with
 *                                --store postgres its own database in one PostgreSQL the bench starts), loaded
 *                                over HTTP in alternating chunks, then measured in interleaved rounds; prints
 *                                each figure's ratio this/baseline, a verdict for the ones held to 10% (recall
 *                                and search p99, remembers/s, peak RSS) and `uptime`. No raw-SQLite column.
 * Environment only:
 *   BENCH_PHASES=recall,search,remember   which server measurements to run (e.g. one, to profile it)
 *   BENCH_SERVER_NODE_ARGS=...   extra node flags for the server child, e.g. "--cpu-prof --cpu-prof-dir=/tmp/p"
 *   BENCH_LOAD=http              SQLite: http (the memory target's load), or import (in-process through
 *                                the engine's import: faster, but the server's RSS then says nothing of a load)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { newAdminKey } from '../test/helpers/memory-replicas.ts';
import { startPostgres, type TestPostgres } from '../test/helpers/postgres.ts';
import { type LangGraphBaseline, openLangGraph } from './lib/langgraph-baseline.ts';
import { baselineServers, type CompareOptions, compareMemoryBaseline } from './lib/memory-baseline.ts';
import { isRunnableCheckout } from './lib/memory-cli-server.ts';
import { MemoryDataset, subjectsFor } from './lib/memory-data.ts';
import { type Phase, rememberBodies } from './lib/memory-measure.ts';
import { type PostgresSizeResult, replicas, runPostgresSize } from './lib/memory-postgres.ts';
import { postgresReport } from './lib/memory-postgres-report.ts';
import { current, type RunSettings, runSqliteSize, type SizeResult } from './lib/memory-sqlite.ts';
import { sqliteReport } from './lib/memory-sqlite-report.ts';
import { fmt, median } from './lib/stats.ts';
import { findWrk, prepareWrkRemember } from './lib/wrk-remember.ts';

const { values: flags } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    events: { type: 'string', default: process.env.BENCH_SIZES ?? '100000,1000000' },
    rounds: { type: 'string', default: process.env.BENCH_ROUNDS ?? '3' },
    'postgres-url': { type: 'string' },
    'pool-size': { type: 'string', default: '10' },
    'without-sqlite': { type: 'boolean', default: false },
    'replica-cpu': { type: 'string' },
    baseline: { type: 'string' },
  },
});
if (flags.store !== 'sqlite' && flags.store !== 'postgres') {
  throw new Error(`--store must be sqlite or postgres: got ${flags.store}`);
}
const POSTGRES = flags.store === 'postgres';
const SIZES = flags.events
  .split(',')
  .map((s) => Math.round(Number(s.trim().replace(/_/g, ''))))
  .filter((n) => Number.isFinite(n) && n > 0)
  .sort((a, b) => a - b);
const ROUNDS = Math.max(1, Math.min(9, Number(flags.rounds) || 3));
const POOL_SIZE = Number(flags['pool-size']);
if (!Number.isInteger(POOL_SIZE) || POOL_SIZE < 2)
  throw new Error(`--pool-size must be an integer >= 2: got ${flags['pool-size']}`);
const WITH_SQLITE = !POSTGRES || !flags['without-sqlite'];
const REPLICA_CPU = flags['replica-cpu'] === undefined ? undefined : Number(flags['replica-cpu'].replace(/m$/, ''));
if (REPLICA_CPU !== undefined && !(Number.isInteger(REPLICA_CPU) && REPLICA_CPU >= 10 && REPLICA_CPU <= 64_000))
  throw new Error(
    `--replica-cpu must be thousandths of a core, 10..64000 (e.g. 500 or 500m): got ${flags['replica-cpu']}`,
  );
if (REPLICA_CPU !== undefined && !POSTGRES) throw new Error('--replica-cpu needs --store postgres');
if (REPLICA_CPU !== undefined && !findWrk()) throw new Error('--replica-cpu needs wrk (apt-get install wrk)');
const BASELINE = flags.baseline;
if (BASELINE !== undefined) {
  if (!isRunnableCheckout(BASELINE)) {
    throw new Error(`--baseline: ${BASELINE} is not a checkout with bin/tether and node_modules (npm ci there)`);
  }
  if (flags['postgres-url'])
    throw new Error('--baseline starts its own PostgreSQL (a database per side): drop --postgres-url');
  if (REPLICA_CPU !== undefined) throw new Error('--replica-cpu is not measured with --baseline');
  if ((process.env.BENCH_LOAD ?? 'http') !== 'http')
    throw new Error('--baseline loads over HTTP only (BENCH_LOAD=http)');
}
const PHASES = new Set(
  (process.env.BENCH_PHASES ?? 'recall,search,remember').split(',').map((s) => s.trim()),
) as Set<Phase>;

const log = (s: string) => process.stderr.write(`${s}\n`);

/** The PostgreSQL the bench starts: durable commits (fsync on), as a deployment would run. */
const BENCH_POSTGRES_SETTINGS = { fsync: 'on', shared_buffers: '256MB', max_connections: '100' };

async function main(): Promise<void> {
  if (SIZES.length === 0) throw new Error('--events names no size');
  const started = performance.now();
  const loadBefore = loadavg()[0] ?? Number.NaN;
  const tmp = mkdtempSync(join(tmpdir(), 'tether-bench-memory-'));
  const wrkBin = findWrk();
  if (!wrkBin) log('wrk not installed: the wrk remember figure is skipped (apt-get install wrk)');
  let postgres: TestPostgres | null = null;
  let langgraph: LangGraphBaseline | null = null;
  const stopAll = async () => {
    await current.server?.stop().catch(() => {});
    await Promise.all([...baselineServers].map((s) => s.stop().catch(() => {})));
    await Promise.all([...replicas].map((r) => r.stop().catch(() => {})));
    await langgraph?.close().catch(() => {});
    await postgres?.stop().catch(() => {});
    rmSync(tmp, { recursive: true, force: true });
  };
  const onSignal = async () => {
    await stopAll();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const startMs = Date.now() - (Math.max(...SIZES) + 100_000) * 20 - 86_400_000;
  // The same seed and start for every store: each is loaded with the same events.
  const datasets = {
    sqlite: new MemoryDataset(42, startMs),
    pg: new MemoryDataset(42, startMs),
    lg: new MemoryDataset(42, startMs),
  };
  const outputs: string[] = [];
  const settings: RunSettings = {
    rounds: ROUNDS,
    phases: PHASES,
    nodeArgs: (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(/\s+/).filter(Boolean),
    overHttp: (process.env.BENCH_LOAD ?? 'http') !== 'import',
    raw: !POSTGRES,
    wrk: null,
    replicaCpu: REPLICA_CPU,
    tmp,
    writes: (size, subjects) => {
      const w = new MemoryDataset(1000 + size, 0, 1);
      w.useSubjects(subjects);
      return w;
    },
  };
  try {
    if (BASELINE !== undefined) {
      let pgBase: CompareOptions['postgres'];
      if (POSTGRES) {
        log('starting PostgreSQL (initdb in a temp folder, fsync on)');
        const pg = await startPostgres({ settings: BENCH_POSTGRES_SETTINGS });
        postgres = pg;
        pgBase = { createDatabase: () => pg.createDatabase(), poolSize: POOL_SIZE, adminKey: newAdminKey() };
      }
      const report = await compareMemoryBaseline({
        ...settings,
        checkout: BASELINE,
        sizes: SIZES,
        tmp,
        datasets: [new MemoryDataset(42, startMs), new MemoryDataset(42, startMs)],
        prepareWrk: async (size, subjects) =>
          wrkBin ? prepareWrkRemember(wrkBin, tmp, rememberBodies(size, subjects)) : null,
        postgres: pgBase,
      });
      const secs = (performance.now() - started) / 1000;
      process.stdout.write(
        `bench:memory --baseline — this tree's memory server beside ${BASELINE}'s, same data, same run ` +
          `(node ${process.version}, ${ROUNDS} interleaved rounds, medians; ratios this/baseline)\n\n${report}\n\n` +
          `total ${fmt(secs)} s\n`,
      );
      return;
    }
    let target = null;
    if (POSTGRES) {
      let url = flags['postgres-url'];
      if (!url) {
        log('starting PostgreSQL (initdb in a temp folder, fsync on)');
        postgres = await startPostgres({ settings: BENCH_POSTGRES_SETTINGS });
        url = await postgres.createDatabase();
      }
      target = { url, adminKey: newAdminKey(), poolSize: POOL_SIZE };
      langgraph = await openLangGraph(url, POOL_SIZE);
    }
    let loaded = 0;
    for (const size of SIZES) {
      const subjects = subjectsFor(size);
      for (const d of Object.values(datasets)) d.useSubjects(subjects);
      settings.wrk = wrkBin ? await prepareWrkRemember(wrkBin, tmp, rememberBodies(size, subjects)) : null;
      let sqlite: SizeResult | null = null;
      if (WITH_SQLITE) {
        sqlite = await runSqliteSize(settings, datasets.sqlite, join(tmp, 'data'), size, loaded, subjects);
        if (!POSTGRES) outputs.push(sqliteReport(size, sqlite));
        summaryLine(`sqlite ${fmt(size)}`, sqlite.tether);
      }
      if (target && langgraph) {
        const pg: PostgresSizeResult = await runPostgresSize(
          settings,
          target,
          datasets.pg,
          datasets.lg,
          langgraph,
          size,
          loaded,
          subjects,
        );
        outputs.push(postgresReport(size, sqlite, pg));
        summaryLine(`postgres ${fmt(size)}`, pg.one);
      }
      loaded = size;
    }
  } finally {
    await stopAll();
  }
  const secs = (performance.now() - started) / 1000;
  const title = POSTGRES
    ? 'Tether memory server over HTTP on SQLite and on PostgreSQL (1 and 2 replicas) vs LangGraph PostgresStore, same data, same run'
    : 'Tether memory server over HTTP vs raw better-sqlite3, same data, same run';
  process.stdout.write(
    `bench:memory — ${title} (node ${process.version}, medians of ${ROUNDS} rounds; targets apply at 10^6 events)\n\n` +
      `${outputs.join('\n\n')}\n\ntotal ${fmt(secs)} s; 1-min load average before the run ${fmt(loadBefore)}, after ` +
      `${fmt(loadavg()[0] ?? Number.NaN)} (2 cores; well above 0 means other work shared the CPU and the latency tails are noisier)\n`,
  );
}

function summaryLine(
  label: string,
  t: { recallP99: number; searchP99: number; remembersWrk: number; remembers: number }[],
) {
  const rem = median(t.map((x) => (Number.isFinite(x.remembersWrk) ? x.remembersWrk : x.remembers)));
  log(
    `  ${label}: recall p99 ${fmt(median(t.map((x) => x.recallP99)))} ms, search p99 ` +
      `${fmt(median(t.map((x) => x.searchP99)))} ms, ${fmt(rem)} remembers/s`,
  );
}

await main();
