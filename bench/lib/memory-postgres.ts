/**
 * @module
 * One size of `bench:memory -- --store postgres`: `--store postgres` replicas in child processes on one
 * database. Replica A is loaded over HTTP (the memory phase: RSS under the load) and measured alone
 * with `measureServer`; then replica B starts and both share the rate measurements (the same clients
 * in all, half on each: 8 node:http clients, wrk with 8 and with 64 connections); then LangGraph's PostgresStore is loaded
 * with the same events and measured on the same database (`langgraph-baseline.ts`).
 */
import pg from 'pg';
import { LoopbackClient, runLoad } from './http-load.ts';
import type { LangGraphBaseline } from './langgraph-baseline.ts';
import { whileIdle } from './machine-cpu.ts';
import { type MemoryDataset, recallRequest } from './memory-data.ts';
import { loadAndStress, type MemoryPhase } from './memory-load-phase.ts';
import {
  CLIENTS,
  type Figures,
  MB,
  measureServer,
  mintAgentKey,
  perCommitBetween,
  workload,
  writeCounters,
} from './memory-measure.ts';
import { type ChildServer, startChildServer } from './memory-process.ts';
import type { RunSettings } from './memory-sqlite.ts';
import { type CpuCap, capCpu } from './replica-cpu-cap.ts';
import { fmt } from './stats.ts';

/** The rate figures of two replicas sharing the load. */
export interface TwoReplicaFigures {
  /** Exact recalls/s, 8 clients, 4 on each replica. */
  recallRate: number;
  /** Remembers/s with wrk, 8 connections in all (4 on each replica) (NaN without wrk). */
  remembersWrk: number;
  /** Remembers/s and p99 ms with wrk, `MANY` connections in all, half on each replica. */
  remembersMany: number;
  rememberP99Many: number;
  /** The machine's CPU left idle (% of all cores) during that run. */
  idleMany: number;
  /** Remembers/s with the node:http driver, 8 clients, 4 on each. */
  remembers: number;
  /** Mean remembers per transaction over both, under the headline driver. */
  perCommit: number;
  /** The higher of the two replicas' remember p99 under wrk, ms. */
  rememberP99: number;
}

/** Remembers/s (wrk, `MANY` connections in all) with each replica capped at `millicores` (`--replica-cpu`). */
export interface CappedFigures {
  millicores: number;
  one: number[];
  two: number[];
  /** The machine's idle CPU (%) during each run. */
  idleOne: number[];
  idleTwo: number[];
}

/** Everything measured at one size on PostgreSQL. */
export interface PostgresSizeResult extends MemoryPhase {
  events: number;
  loadSecs: number;
  dbMb: number;
  one: Figures[];
  two: TwoReplicaFigures[];
  langgraph: Figures[];
  langgraphLoadSecs: number;
  capped?: CappedFigures;
  rssMb: number;
  peakMb: number;
  errors: string[];
}

/** The database of the run and what its replicas share. */
export interface PostgresTarget {
  url: string;
  adminKey: string;
  poolSize: number;
}

const log = (s: string) => process.stderr.write(`${s}\n`);

/**
 * Connections of the many-connection remember rows (wrk): enough closed-loop clients to keep a
 * replica's writer busy when each write waits ~10 ms on round trips and the WAL flush.
 */
export const MANY = 64;

/** Replicas a size runs, so a signal handler can stop them. */
export const replicas = new Set<ChildServer>();

async function startReplica(s: RunSettings, t: PostgresTarget, dataDir: string): Promise<ChildServer> {
  const server = await startChildServer(dataDir, s.nodeArgs, {
    url: t.url,
    poolSize: t.poolSize,
    adminKey: t.adminKey,
  });
  replicas.add(server);
  return server;
}

async function stopReplica(server: ChildServer): Promise<void> {
  await server.stop();
  replicas.delete(server);
}

/**
 * Analyzes the tables (what autovacuum does a minute or so after a big load: the bench does not wait
 * for it, and without statistics the planner takes a namespace for rare and scans it for a word),
 * then reads the events stored and the size of the database.
 */
export async function analyzeDatabase(url: string): Promise<{ events: number; mb: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('ANALYZE');
    const events = await client.query('SELECT count(*)::int AS n FROM events');
    const size = await client.query('SELECT pg_database_size(current_database())::bigint AS b');
    return { events: events.rows[0].n as number, mb: Number(size.rows[0].b) / 1e6 };
  } finally {
    await client.end();
  }
}

/** The rate measurements with two replicas: recall and remember clients split over both. */
async function measureTwo(
  servers: [ChildServer, ChildServer],
  key: string,
  dataset: MemoryDataset,
  wl: ReturnType<typeof workload>,
  s: RunSettings,
  size: number,
  round: number,
  errors: string[],
): Promise<TwoReplicaFigures> {
  const headers = { authorization: `Bearer ${key}` };
  const half = CLIENTS / 2;
  const recalls = await Promise.all(
    servers.map((srv, n) =>
      runLoad({
        url: srv.url,
        headers,
        concurrency: half,
        maxRequests: 20_000,
        maxMs: 2_500,
        warmup: 50,
        request: (i) => recallRequest(wl.keys[(i * 2 + n + round * 7919 + wl.keys.length * 8) % wl.keys.length]!),
      }),
    ),
  );
  const before = await Promise.all(servers.map((srv) => writeCounters(srv.url)));
  let uniq = 0;
  const remembers = await Promise.all(
    servers.map((srv, n) =>
      runLoad({
        url: srv.url,
        headers,
        concurrency: half,
        maxRequests: 40_000,
        maxMs: 4_000,
        warmup: 50,
        request: () => ({
          method: 'POST',
          path: '/v1/memories',
          body: {
            subject: dataset.randomSubject(),
            predicate: 'note',
            value: `${dataset.words(5)} two${size}s${round}r${n}x${uniq++}`,
          },
        }),
      }),
    ),
  );
  const wrk = s.wrk;
  const wrkRuns = wrk
    ? await Promise.all(servers.map((srv, n) => wrk.run(srv.url, key, `t${size}s${round}r${n}x`, half, 6)))
    : null;
  const many = wrk
    ? await whileIdle(() =>
        Promise.all(servers.map((srv, n) => wrk.run(srv.url, key, `u${size}s${round}r${n}x`, MANY / 2, 6))),
      )
    : null;
  const manyRuns = many?.value ?? null;
  const idleMany = many?.idle ?? Number.NaN;
  const after = await Promise.all(servers.map((srv) => writeCounters(srv.url)));
  for (const r of [...recalls, ...remembers]) {
    if (r.errors > 0) errors.push(`two replicas: ${r.errors}/${r.requests} failed, e.g. ${r.errorSamples[0] ?? ''}`);
  }
  for (const w of [...(wrkRuns ?? []), ...(manyRuns ?? [])]) {
    if (w.failed > 0) errors.push(`two replicas (wrk): ${w.failed} not stored`);
  }
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const jobs = sum(after.map((a, i) => a.jobs - (before[i] as typeof a).jobs));
  const batches = sum(after.map((a, i) => a.batches - (before[i] as typeof a).batches));
  return {
    recallRate: sum(recalls.map((r) => r.perSecond)),
    remembers: sum(remembers.map((r) => r.perSecond)),
    remembersWrk: wrkRuns ? sum(wrkRuns.map((w) => w.perSecond)) : Number.NaN,
    perCommit: perCommitBetween({ jobs: 0, batches: 0 }, { jobs, batches }),
    rememberP99: wrkRuns ? Math.max(...wrkRuns.map((w) => w.p99Ms)) : Number.NaN,
    remembersMany: manyRuns ? sum(manyRuns.map((w) => w.perSecond)) : Number.NaN,
    rememberP99Many: manyRuns ? Math.max(...manyRuns.map((w) => w.p99Ms)) : Number.NaN,
    idleMany,
  };
}

/**
 * Loads `size - loaded` more events into the database (Tether over HTTP, LangGraph in bulk) and measures.
 * @param dataset the Tether events; `lgDataset` the same generator for LangGraph (same seed, same position)
 */
export async function runPostgresSize(
  s: RunSettings,
  t: PostgresTarget,
  dataset: MemoryDataset,
  lgDataset: MemoryDataset,
  langgraph: LangGraphBaseline,
  size: number,
  loaded: number,
  subjects: number,
): Promise<PostgresSizeResult> {
  const toLoad = Math.max(0, size - loaded);
  const dataDir = `${s.tmp}/pg-replica-data`;
  const t0 = performance.now();
  const a = await startReplica(s, t, dataDir);
  const memoryPhase = await loadAndStress(a, dataset, toLoad, `postgres ${fmt(size)}`, size + 1);
  const loadSecs = (performance.now() - t0) / 1000;
  const db = await analyzeDatabase(t.url);
  const result: PostgresSizeResult = {
    events: db.events,
    loadSecs,
    dbMb: db.mb,
    ...memoryPhase,
    one: [],
    two: [],
    langgraph: [],
    langgraphLoadSecs: Number.NaN,
    rssMb: Number.NaN,
    peakMb: Number.NaN,
    errors: [],
  };
  const wl = workload(dataset, size);
  const writes = s.writes(size, subjects);
  const key = await mintAgentKey(a);
  for (let round = 0; round < s.rounds; round++) {
    log(`  postgres, one replica, round ${round + 1}/${s.rounds}`);
    result.one.push(
      await measureServer({
        url: a.url,
        key,
        dataset: writes,
        wl,
        round,
        errors: result.errors,
        wrk: s.wrk,
        size,
        serverCpuMicros: () => a.cpuMicros(),
        phases: s.phases,
        manyConnections: MANY,
      }),
    );
  }
  const mem = a.memory();
  result.rssMb = mem.rss / MB;
  result.peakMb = mem.peak / MB;
  const b = await startReplica(s, t, `${dataDir}-b`);
  await warm(b, key, wl);
  for (let round = 0; round < s.rounds; round++) {
    log(`  postgres, two replicas, round ${round + 1}/${s.rounds}`);
    result.two.push(await measureTwo([a, b], key, writes, wl, s, size, round, result.errors));
  }
  const caps: CpuCap[] = [];
  try {
    if (s.replicaCpu) {
      for (const [i, srv] of [a, b].entries()) caps.push(capCpu(srv.pid, s.replicaCpu, `r${i}`));
      result.capped = await measureCapped([a, b], key, s, size, result.errors);
    }
  } finally {
    await stopReplica(b);
    await stopReplica(a);
    for (const c of caps) await c.release(); // once the replicas are gone (remove() kills what is left inside)
  }

  const t1 = performance.now();
  await langgraph.load(lgDataset, toLoad, `LangGraph PostgresStore ${fmt(size)}`);
  result.langgraphLoadSecs = (performance.now() - t1) / 1000;
  await analyzeDatabase(t.url);
  const lgWrites = s.writes(size, subjects);
  for (let round = 0; round < s.rounds; round++) {
    log(`  LangGraph PostgresStore round ${round + 1}/${s.rounds}`);
    result.langgraph.push(await langgraph.measure(wl, round, lgWrites, CLIENTS, MANY));
  }
  return result;
}

/**
 * One replica and then two, each under a CPU quota (already applied), with wrk on `MANY` connections in
 * all: what a second replica adds when each has cores of its own, as pods with `limits.cpu` on their nodes.
 */
async function measureCapped(
  servers: [ChildServer, ChildServer],
  key: string,
  s: RunSettings,
  size: number,
  errors: string[],
): Promise<CappedFigures> {
  const wrk = s.wrk;
  if (!wrk) throw new Error('--replica-cpu needs wrk');
  const out: CappedFigures = { millicores: s.replicaCpu as number, one: [], two: [], idleOne: [], idleTwo: [] };
  for (let round = 0; round < s.rounds; round++) {
    log(`  postgres, replicas capped at ${out.millicores}m each, round ${round + 1}/${s.rounds}`);
    const { value: one, idle: idleOne } = await whileIdle(() =>
      wrk.run(servers[0].url, key, `k${size}s${round}r`, MANY, 6),
    );
    out.idleOne.push(idleOne);
    out.one.push(one.perSecond);
    const { value: two, idle: idleTwo } = await whileIdle(() =>
      Promise.all(servers.map((srv, n) => wrk.run(srv.url, key, `q${size}s${round}r${n}x`, MANY / 2, 6))),
    );
    out.idleTwo.push(idleTwo);
    out.two.push(two.reduce((sum, w) => sum + w.perSecond, 0));
    for (const w of [one, ...two]) if (w.failed > 0) errors.push(`capped replicas (wrk): ${w.failed} not stored`);
  }
  return out;
}

/** A few hundred recalls, so replica B's key cache and connections are warm before it is measured. */
async function warm(server: ChildServer, key: string, wl: ReturnType<typeof workload>): Promise<void> {
  const client = new LoopbackClient(server.url, { headers: { authorization: `Bearer ${key}` } });
  try {
    for (let i = 0; i < 300; i++) {
      await client.send(recallRequest(wl.keys[i % wl.keys.length]!));
    }
  } finally {
    client.close();
  }
}
