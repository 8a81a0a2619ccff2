/**
 * @module
 * bench:memory — the memory server over HTTP at 10^5 and 10^6 events, side by side with raw
 * better-sqlite3 on a copy of the same database.
 *
 * For each size it starts the server in a child process and loads synthetic events (see
 * `lib/memory-data.ts`) over HTTP (`lib/http-loader.ts`: batches of 500 statements, 4 requests in
 * flight), then runs 10 s each of recall, search and remember with 8 clients (`lib/memory-stress.ts`)
 * and reads the server's RSS after the load, at the end and its peak: the memory target. Then it
 * restarts the server on that data (the database copied for the baseline) and measures: exact recall
 * latency (1 client) and throughput (8 clients), text search latency (1 client, 1-2 word queries that
 * hit), remembers/s (8 clients, new facts in the loaded namespace; with wrk when installed, see
 * lib/wrk-remember.ts, and with the node:http driver of lib/http-load.ts, which is client-bound: wrk's
 * figure is the one held against the target), and the server's RSS. The baseline
 * runs the same point read, FTS query and single-row insert (own transaction) on raw better-sqlite3.
 * Each figure is the median over BENCH_ROUNDS rounds. Loopback only; temp dirs are removed.
 *
 * Environment:
 *   BENCH_SIZES=100000,1000000   event counts to load (ascending; loading is incremental)
 *   BENCH_ROUNDS=3               rounds per measurement (median reported)
 *   BENCH_PHASES=recall,search,remember   which server measurements to run (e.g. one, to profile it)
 *   BENCH_SERVER_NODE_ARGS=...   extra node flags for the server child, e.g. "--cpu-prof --cpu-prof-dir=/tmp/p"
 *   BENCH_LOAD=http              http (the memory target's load), or import (in-process through the
 *                                engine's import: faster, but the server's RSS then says nothing of a load)
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createProgress } from '../src/cli/progress.ts';
import { systemClock } from '../src/common/clock.ts';
import { newEventId } from '../src/common/ids.ts';
import { MemoryEngine } from '../src/memory/engine.ts';
import { starterRegistry } from '../src/memory/registry.ts';
import { RegistryBook } from '../src/memory/registry-book.ts';
import { openSqliteStore, type SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { type LoadRequest, type LoadResult, LoopbackClient, runLoad } from './lib/http-load.ts';
import { loadOverHttp } from './lib/http-loader.ts';
import { MAIN_NAMESPACE, MemoryDataset, NAMESPACES, rng, subjectsFor } from './lib/memory-data.ts';
import { type ChildServer, startChildServer } from './lib/memory-process.ts';
import { stressPhases } from './lib/memory-stress.ts';
import { RawSqlite } from './lib/raw-sqlite.ts';
import { fmt, median, summarize, table } from './lib/stats.ts';
import { CITIES } from './lib/words.ts';
import { findWrk, prepareWrkRemember, type WrkRemember } from './lib/wrk-remember.ts';

const SIZES = (process.env.BENCH_SIZES ?? '100000,1000000')
  .split(',')
  .map((s) => Math.round(Number(s.trim())))
  .filter((n) => Number.isFinite(n) && n > 0)
  .sort((a, b) => a - b);
const ROUNDS = Math.max(1, Math.min(9, Number(process.env.BENCH_ROUNDS ?? 3) || 3));
const SERVER_NODE_ARGS = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
const PHASES = new Set((process.env.BENCH_PHASES ?? 'recall,search,remember').split(',').map((s) => s.trim()));
const LOAD_OVER_HTTP = (process.env.BENCH_LOAD ?? 'http') !== 'import';
const CLIENTS = 8;
const BATCH = 5_000;

const TARGETS = { recallP99: 5, searchP99: 25, remembers: 5_000, rssMb: 300 };

interface Figures {
  recallP50: number;
  recallP99: number;
  recallRate: number;
  searchP50: number;
  searchP99: number;
  searchHits: number;
  searchZero: number;
  remembers: number;
  /** Mean remembers per store transaction (group commit) under the headline driver (wrk when installed), from /metrics. */
  perCommit: number;
  /** Remembers/s with wrk as the client (NaN without wrk). */
  remembersWrk: number;
  /**
   * Server CPU (all threads) per remember under wrk, us (NaN without wrk): steadier than a rate on a
   * shared machine, since other work takes the server's time but not its CPU.
   */
  cpuPerRemember: number;
  /** Remember latency under wrk's 8 connections, ms (NaN without wrk). */
  rememberP50: number;
  rememberP99: number;
}

interface SizeResult {
  events: number;
  subjects: number;
  loadSecs: number;
  dbMb: number;
  tether: Figures[];
  raw: Figures[];
  rssMb: number;
  peakMb: number;
  startRssMb: number;
  /** The server that was loaded over HTTP then stressed: RSS after the load, at the end, and its peak. */
  loadRssMb: number;
  stressEndRssMb: number;
  loadPeakMb: number;
  stress: string;
  heapUsedMb: number;
  heapTotalMb: number;
  externalMb: number;
  errors: string[];
}

const log = (s: string) => process.stderr.write(`${s}\n`);

function shuffled<T>(items: readonly T[], rand: () => number): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [a[i], a[j]] = [a[j] as T, a[i] as T];
  }
  return a;
}

/** Recall keys and 1-2 word search queries that hit, from the dataset's sample of the main namespace. */
function workload(dataset: MemoryDataset, seed: number) {
  const rand = rng(seed);
  const sample = shuffled(dataset.sample, rand);
  const keys = sample.map((f) => ({ subject: f.subject, predicate: f.predicate }));
  const queries: string[][] = [];
  for (const f of sample) {
    if (f.predicate === 'birthday') continue;
    const words = [...new Set(f.text.split(' ').filter((w) => /^[a-z]+$/.test(w)))];
    if (words.length === 0) continue;
    const first = words[Math.floor(rand() * words.length)] as string;
    const rest = words.filter((w) => w !== first);
    if (rest.length > 0 && rand() < 0.3) queries.push([first, rest[Math.floor(rand() * rest.length)] as string]);
    else queries.push([first]);
  }
  return { keys, queries };
}

async function mintAgentKey(server: ChildServer): Promise<string> {
  const client = new LoopbackClient(server.url, { headers: { authorization: `Bearer ${server.adminKey}` } });
  try {
    const res = await client.send({
      method: 'POST',
      path: '/v1/keys',
      body: { tenant: MAIN_NAMESPACE.tenant, agent: MAIN_NAMESPACE.agent },
    });
    if (res.status !== 200 && res.status !== 201) throw new Error(`minting a key failed: ${res.status} ${res.body}`);
    return (JSON.parse(res.body) as { key: string }).key;
  } finally {
    client.close();
  }
}

const MB = 1048576;

/** 20,000 remember bodies in the remember phase's mix, each value ending in wrk's `@N@` placeholder. */
function rememberBodies(size: number, subjects: number): string[] {
  const gen = new MemoryDataset(2000 + size, 0, 1);
  gen.useSubjects(subjects);
  const rand = rng(3000 + size);
  return Array.from({ length: 20_000 }, () => {
    const u = rand();
    const predicate = u < 0.6 ? 'note' : u < 0.85 ? 'prefers' : 'lives_in';
    const value =
      predicate === 'lives_in'
        ? `${CITIES[Math.floor(rand() * CITIES.length)]} @N@`
        : `${gen.words(predicate === 'note' ? 5 : 2)} @N@`;
    return JSON.stringify({ subject: gen.randomSubject(), predicate, value });
  });
}

/** Values of the named metrics (gauges, any prefix such as `tether_`) from the server's /metrics; NaN when absent. */
async function metricValues<K extends string>(url: string, names: Record<K, string>): Promise<Record<K, number>> {
  const client = new LoopbackClient(url);
  try {
    const body = (await client.send({ method: 'GET', path: '/metrics' })).body;
    const out = {} as Record<K, number>;
    for (const [key, name] of Object.entries(names) as [K, string][]) {
      const m = new RegExp(`^\\w*${name}(?:\\{[^}]*\\})? ([0-9.e+]+)`, 'm').exec(body);
      out[key] = m ? Number(m[1]) : Number.NaN;
    }
    return out;
  } finally {
    client.close();
  }
}

/** The writer's group-commit counters. */
const writeCounters = (url: string) =>
  metricValues(url, { batches: 'tether_memory_write_batches', jobs: 'tether_memory_write_jobs' });

/** Mean remembers per commit between two readings of `writeCounters`. */
const perCommitBetween = (a: { batches: number; jobs: number }, b: { batches: number; jobs: number }) =>
  (b.jobs - a.jobs) / Math.max(1, b.batches - a.batches);

/** One wrk remember run (6 s): its rate and latency, remembers per commit, and server CPU per remember. */
async function rememberWithWrk(
  wrk: WrkRemember,
  url: string,
  key: string,
  tag: string,
  serverCpuMicros: () => number,
  errors: string[],
) {
  const before = await writeCounters(url);
  const cpu0 = serverCpuMicros();
  const w = await wrk.run(url, key, tag, CLIENTS, 6);
  const cpu1 = serverCpuMicros();
  const after = await writeCounters(url);
  if (w.failed > 0) errors.push(`remember (wrk): ${w.failed} requests not stored`);
  return {
    ...w,
    perCommit: perCommitBetween(before, after),
    cpuPerRemember: (cpu1 - cpu0) / Math.max(1, after.jobs - before.jobs),
  };
}

/** V8 heap and external memory of the server, bytes. */
const heapFigures = (url: string) =>
  metricValues(url, {
    used: 'nodejs_heap_size_used_bytes',
    total: 'nodejs_heap_size_total_bytes',
    external: 'nodejs_external_memory_bytes',
  });

function countHits(body: string): number {
  let n = 0;
  for (let i = body.indexOf('"event_id"'); i !== -1; i = body.indexOf('"event_id"', i + 1)) n++;
  return n;
}

function noteErrors(phase: string, r: LoadResult, errors: string[]): void {
  if (r.errors > 0) errors.push(`${phase}: ${r.errors}/${r.requests} failed, e.g. ${r.errorSamples[0] ?? ''}`);
}

async function measureServer(
  url: string,
  key: string,
  dataset: MemoryDataset,
  wl: ReturnType<typeof workload>,
  round: number,
  errors: string[],
  wrk: WrkRemember | null,
  size: number,
  serverCpuMicros: () => number,
): Promise<Figures> {
  const headers = { authorization: `Bearer ${key}` };
  const rand = rng(1000 + round);
  const recallReq = (i: number): LoadRequest => {
    const k = wl.keys[(i + round * 7919 + wl.keys.length * 8) % wl.keys.length]!;
    return {
      method: 'GET',
      path: `/v1/memories?subject=${encodeURIComponent(k.subject)}&predicate=${k.predicate}`,
    };
  };
  const skipped: LoadResult = {
    requests: 0,
    errors: 0,
    errorSamples: [],
    latenciesMs: [],
    elapsedMs: 0,
    perSecond: NaN,
  };
  const recall = !PHASES.has('recall')
    ? skipped
    : await runLoad({
        url,
        headers,
        concurrency: 1,
        maxRequests: 3_000,
        maxMs: 4_000,
        warmup: 200,
        request: recallReq,
      });
  noteErrors('recall', recall, errors);
  const recallRate = !PHASES.has('recall')
    ? skipped
    : await runLoad({
        url,
        headers,
        concurrency: CLIENTS,
        maxRequests: 20_000,
        maxMs: 2_500,
        warmup: 100,
        request: recallReq,
      });
  noteErrors('recall x8', recallRate, errors);

  let hits = 0;
  let zero = 0;
  const search = !PHASES.has('search')
    ? skipped
    : await runLoad({
        url,
        headers,
        concurrency: 1,
        maxRequests: 1_500,
        maxMs: 6_000,
        warmup: 50,
        request: (i) => {
          const q = wl.queries[(i + round * 104729 + wl.queries.length * 8) % wl.queries.length]!;
          return { method: 'GET', path: `/v1/memories?q=${encodeURIComponent(q.join(' '))}` };
        },
        check: (status, body, i) => {
          if (status !== 200) return `HTTP ${status}: ${body.slice(0, 200)}`;
          if (i >= 0) {
            const n = countHits(body);
            hits += n;
            if (n === 0) zero++;
          }
          return undefined;
        },
      });
  noteErrors('search', search, errors);

  let uniq = 0;
  const writesBefore = await writeCounters(url);
  const remember = !PHASES.has('remember')
    ? skipped
    : await runLoad({
        url,
        headers,
        concurrency: CLIENTS,
        maxRequests: 40_000,
        maxMs: 4_000,
        warmup: 100,
        request: () => {
          const u = rand();
          const predicate = u < 0.6 ? 'note' : u < 0.85 ? 'prefers' : 'lives_in';
          // Unique across rounds and sizes: the 10^6 store still holds what the 10^5 rounds wrote.
          const tag = `bench${size}s${round}r${uniq++}`;
          const value =
            predicate === 'lives_in'
              ? `${CITIES[Math.floor(rand() * CITIES.length)]} ${tag}`
              : `${dataset.words(predicate === 'note' ? 5 : 2)} ${tag}`;
          return { method: 'POST', path: '/v1/memories', body: { subject: dataset.randomSubject(), predicate, value } };
        },
        check: (status, body) =>
          status === 200 && body.includes('"stored":true') ? undefined : `HTTP ${status}: ${body.slice(0, 200)}`,
      });
  noteErrors('remember', remember, errors);
  const writesAfter = await writeCounters(url);
  const withWrk =
    wrk && PHASES.has('remember')
      ? await rememberWithWrk(wrk, url, key, `w${size}s${round}r`, serverCpuMicros, errors)
      : null;

  const r = summarize(recall.latenciesMs);
  const s = summarize(search.latenciesMs);
  return {
    recallP50: r.p50,
    recallP99: r.p99,
    recallRate: recallRate.perSecond,
    searchP50: s.p50,
    searchP99: s.p99,
    searchHits: hits / Math.max(1, search.requests),
    searchZero: zero / Math.max(1, search.requests),
    remembers: remember.perSecond,
    perCommit: withWrk?.perCommit ?? perCommitBetween(writesBefore, writesAfter),
    remembersWrk: withWrk?.perSecond ?? Number.NaN,
    cpuPerRemember: withWrk?.cpuPerRemember ?? Number.NaN,
    rememberP50: withWrk?.p50Ms ?? Number.NaN,
    rememberP99: withWrk?.p99Ms ?? Number.NaN,
  };
}

/** Times `op` for up to `max` calls or `maxMs`; latencies in ms. */
function timeLoop(max: number, maxMs: number, op: (i: number) => void): { lat: number[]; perSecond: number } {
  const lat: number[] = [];
  const start = performance.now();
  const deadline = start + maxMs;
  for (let i = 0; i < max; i++) {
    const t0 = performance.now();
    op(i);
    const t1 = performance.now();
    lat.push(t1 - t0);
    if (t1 > deadline) break;
  }
  return { lat, perSecond: (lat.length / (performance.now() - start)) * 1000 };
}

function measureRaw(raw: RawSqlite, wl: ReturnType<typeof workload>, round: number): Figures {
  const ns = MAIN_NAMESPACE.namespace;
  const key = (i: number) => wl.keys[(i + round * 7919 + wl.keys.length * 8) % wl.keys.length]!;
  timeLoop(500, 1_000, (i) => raw.pointRead(ns, key(i).subject, key(i).predicate));
  const point = timeLoop(20_000, 2_000, (i) => raw.pointRead(ns, key(i).subject, key(i).predicate));
  let hits = 0;
  let zero = 0;
  const search = timeLoop(1_500, 3_000, (i) => {
    const q = wl.queries[(i + round * 104729 + wl.queries.length * 8) % wl.queries.length]!;
    const n = raw.search(ns, q).length;
    hits += n;
    if (n === 0) zero++;
  });
  const rand = rng(2000 + round);
  const insert = timeLoop(20_000, 2_500, (i) =>
    raw.insert({
      id: newEventId(),
      namespace: ns,
      tenant: MAIN_NAMESPACE.tenant,
      subject: `raw subject ${Math.floor(rand() * 50_000)}`,
      predicate: 'note',
      value: `raw bench note ${round}x${i}`,
    }),
  );
  const p = summarize(point.lat);
  const s = summarize(search.lat);
  return {
    recallP50: p.p50,
    recallP99: p.p99,
    recallRate: point.perSecond,
    searchP50: s.p50,
    searchP99: s.p99,
    searchHits: hits / Math.max(1, search.lat.length),
    searchZero: zero / Math.max(1, search.lat.length),
    remembers: insert.perSecond,
    perCommit: 1,
    remembersWrk: Number.NaN,
    cpuPerRemember: Number.NaN,
    rememberP50: Number.NaN,
    rememberP99: Number.NaN,
  };
}

function report(size: number, r: SizeResult): string {
  const med = (list: Figures[], f: keyof Figures) => median(list.map((x) => x[f]));
  const spread = (f: keyof Figures) => {
    const v = r.tether.map((x) => x[f]);
    return v.length > 1 ? `${fmt(Math.min(...v))}-${fmt(Math.max(...v))}` : '';
  };
  const ratio = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${fmt(a / b)}x` : '-');
  const check = (ok: boolean) => (ok ? 'ok' : 'MISSED');
  const row = (name: string, f: keyof Figures, target?: { text: string; ok: (v: number) => boolean }): string[] => {
    const t = med(r.tether, f);
    const b = med(r.raw, f);
    return [name, fmt(t), spread(f), fmt(b), ratio(t, b), target?.text ?? '', target ? check(target.ok(t)) : ''];
  };
  // wrk is the remember figure held against the target when installed: the node:http driver is one Node
  // process that plays the 8 clients at ~80 us of CPU per request, one request after another, so on 2
  // cores it bounds the rate itself (the server waits for its requests).
  const withWrk = r.tether.some((x) => Number.isFinite(x.remembersWrk));
  const rememberTarget = { text: `>= ${fmt(TARGETS.remembers)}`, ok: (v: number) => v >= TARGETS.remembers };
  const rows: string[][] = [
    ['metric', 'tether', `range (${r.tether.length} rounds)`, 'raw sqlite', 'tether/raw', 'target', ''],
    row('exact recall p50 ms (1 client)', 'recallP50'),
    row('exact recall p99 ms (1 client)', 'recallP99', {
      text: `<= ${TARGETS.recallP99}`,
      ok: (v) => v <= TARGETS.recallP99,
    }),
    row(`exact recalls/s (${CLIENTS} clients)`, 'recallRate'),
    row('text search p50 ms (1 client)', 'searchP50'),
    row('text search p99 ms (1 client)', 'searchP99', {
      text: `<= ${TARGETS.searchP99}`,
      ok: (v) => v <= TARGETS.searchP99,
    }),
    row('search results/query', 'searchHits'),
    row(`remembers/s (${CLIENTS} clients, wrk)`, 'remembersWrk', withWrk ? rememberTarget : undefined),
    row(`remembers/s (${CLIENTS} clients, node:http driver)`, 'remembers', withWrk ? undefined : rememberTarget),
    row('remembers per commit (group commit)', 'perCommit'),
    row('server CPU us per remember (all threads, wrk)', 'cpuPerRemember'),
    row(`remember p50 ms (${CLIENTS} connections, wrk)`, 'rememberP50'),
    row(`remember p99 ms (${CLIENTS} connections, wrk)`, 'rememberP99'),
    ...(Number.isFinite(r.loadPeakMb)
      ? [
          ['server RSS MB after loading over HTTP', fmt(r.loadRssMb), '', '', '', '', ''],
          [
            `server RSS MB after 10 s each recall/search/remember (${CLIENTS} clients)`,
            fmt(r.stressEndRssMb),
            '',
            '',
            '',
            '',
            '',
          ],
          [
            'server peak RSS MB over load + those 30 s (VmHWM)',
            fmt(r.loadPeakMb),
            '',
            '',
            '',
            `<= ${TARGETS.rssMb}`,
            check(r.loadPeakMb <= TARGETS.rssMb),
          ],
        ]
      : []),
    [
      'server RSS MB (after the latency rounds)',
      fmt(r.rssMb),
      '',
      '',
      '',
      `<= ${TARGETS.rssMb}`,
      check(r.rssMb <= TARGETS.rssMb),
    ],
    [
      'server peak RSS MB (latency rounds, VmHWM)',
      fmt(r.peakMb),
      '',
      '',
      '',
      `<= ${TARGETS.rssMb}`,
      check(r.peakMb <= TARGETS.rssMb),
    ],
    ['server RSS MB at start (no request yet)', fmt(r.startRssMb), '', '', '', '', ''],
    [
      'server V8 heap used/total, external MB',
      `${fmt(r.heapUsedMb)}/${fmt(r.heapTotalMb)}, ${fmt(r.externalMb)}`,
      '',
      '',
      '',
      '',
      '',
    ],
  ];
  const head =
    `== ${fmt(size)} events (store holds ${fmt(r.events)}; ${fmt(r.subjects)} subjects, ${NAMESPACES.length} namespaces, ` +
    `${Math.round(MAIN_NAMESPACE.weight * 100)}% in ${MAIN_NAMESPACE.namespace}; db ${fmt(r.dbMb)} MB; ` +
    `loaded in ${fmt(r.loadSecs)} s) ==`;
  const notes = [
    `raw sqlite: recall = SELECT of one (namespace, subject, predicate) group by index; search = FTS5 MATCH top 50 + join;`,
    `            remember = one events row + its FTS row in their own transaction (the writes of one stored remember).`,
    `latencies are client-observed over loopback HTTP/1.1 keep-alive; the ${CLIENTS}-client figures share the 2 cores with the client.`,
    withWrk
      ? `remembers/s: wrk (C) is the figure held against the target; the node:http driver, one Node process at ~80 us of CPU per request, bounds the rate itself.`
      : `remembers/s: wrk is not installed (apt-get install wrk), so the node:http driver is held against the target; it bounds the rate itself.`,
    ...(r.stress ? [`memory phase: ${r.stress}`] : []),
    `search: ${(med(r.tether, 'searchZero') * 100).toFixed(1)}% of queries returned nothing (their word was only in values since superseded).`,
  ];
  if (r.errors.length > 0) notes.push(`errors: ${r.errors.join('; ')}`);
  return `${head}\n${table(rows)}\n${notes.join('\n')}`;
}

async function main(): Promise<void> {
  if (SIZES.length === 0) throw new Error('BENCH_SIZES names no size');
  const started = performance.now();
  const loadBefore = loadavg()[0] ?? Number.NaN;
  const tmp = mkdtempSync(join(tmpdir(), 'tether-bench-memory-'));
  const wrk = findWrk();
  if (!wrk) log('wrk not installed: the wrk remember figure is skipped (apt-get install wrk)');
  const dataDir = join(tmp, 'data');
  let server: ChildServer | null = null;
  let store: SqliteStore | null = null;
  const cleanup = () => {
    rmSync(tmp, { recursive: true, force: true });
  };
  const onSignal = async () => {
    await server?.stop().catch(() => {});
    cleanup();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const dataset = new MemoryDataset(42, Date.now() - (Math.max(...SIZES) + 100_000) * 20 - 86_400_000);
  const outputs: string[] = [];
  try {
    let loaded = 0;
    for (const size of SIZES) {
      const subjects = subjectsFor(size);
      dataset.useSubjects(subjects);
      const toLoad = Math.max(0, size - loaded);
      const memoryPhase = { loadRssMb: Number.NaN, stressEndRssMb: Number.NaN, loadPeakMb: Number.NaN, stress: '' };
      const t0 = performance.now();
      const progress = createProgress({ label: `loading ${fmt(size)}`, total: toLoad, unit: 'statements' });
      if (LOAD_OVER_HTTP) {
        server = await startChildServer(dataDir, SERVER_NODE_ARGS);
        const sent = await loadOverHttp(dataset, {
          url: server.url,
          adminKey: server.adminKey,
          count: toLoad,
          onProgress: (n) => progress.tick(n),
        });
        progress.done();
        memoryPhase.loadRssMb = server.memory().rss / MB;
        const key = await mintAgentKey(server);
        log(`  10 s each of recall, search, remember (${CLIENTS} clients)`);
        const done = await stressPhases(server.url, key, dataset, workload(dataset, size + 1), {
          clients: CLIENTS,
          seconds: 10,
        });
        const mem = server.memory();
        memoryPhase.stressEndRssMb = mem.rss / MB;
        memoryPhase.loadPeakMb = mem.peak / MB;
        memoryPhase.stress =
          `loaded ${fmt(sent.sent)} statements over HTTP (${sent.failed} requests failed), then ` +
          `${fmt(done.recall)} recalls, ${fmt(done.search)} searches, ${fmt(done.remember)} remembers (${done.errors} failed)`;
        await server.stop();
        server = null;
      } else {
        store = openSqliteStore({ dataDir });
        // Through the engine's import, so the "now" projection of beliefs is built as it would be.
        const loader = new MemoryEngine({
          store,
          registries: new RegistryBook(store, systemClock, starterRegistry('personal')),
          clock: systemClock,
        });
        for (let left = toLoad; left > 0; left -= BATCH) {
          const n = Math.min(BATCH, left);
          await loader.importEvents(dataset.next(n));
          progress.tick(n);
        }
        progress.done();
        await store.close();
        store = null;
      }
      loaded = size;
      const loadSecs = (performance.now() - t0) / 1000;
      store = openSqliteStore({ dataDir });
      const events = await store.countEvents();
      await store.close();
      store = null;

      const dbFile = join(dataDir, 'tether.db');
      const rawDir = join(tmp, `raw-${size}`);
      mkdirSync(rawDir);
      copyFileSync(dbFile, join(rawDir, 'tether.db'));
      const dbMb = statSync(dbFile).size / 1e6;
      const wl = workload(dataset, size);

      const result: SizeResult = {
        events,
        subjects,
        loadSecs,
        dbMb,
        tether: [],
        raw: [],
        rssMb: Number.NaN,
        peakMb: Number.NaN,
        startRssMb: Number.NaN,
        ...memoryPhase,
        heapUsedMb: Number.NaN,
        heapTotalMb: Number.NaN,
        externalMb: Number.NaN,
        errors: [],
      };
      // Writes draw from their own generator, so how many a round manages never changes the data loaded next.
      const writes = new MemoryDataset(1000 + size, 0, 1);
      writes.useSubjects(subjects);
      const wrkRemember = wrk ? await prepareWrkRemember(wrk, tmp, rememberBodies(size, subjects)) : null;
      log(`starting memory server on ${fmt(events)} events`);
      server = await startChildServer(dataDir, SERVER_NODE_ARGS);
      result.startRssMb = server.memory().rss / MB;
      const key = await mintAgentKey(server);
      for (let round = 0; round < ROUNDS; round++) {
        log(`  tether round ${round + 1}/${ROUNDS}`);
        const s = server;
        result.tether.push(
          await measureServer(s.url, key, writes, wl, round, result.errors, wrkRemember, size, () => s.cpuMicros()),
        );
      }
      const mem = server.memory();
      result.rssMb = mem.rss / MB;
      result.peakMb = mem.peak / MB;
      const heap = await heapFigures(server.url);
      result.heapUsedMb = heap.used / MB;
      result.heapTotalMb = heap.total / MB;
      result.externalMb = heap.external / MB;
      await server.stop();
      server = null;

      const raw = new RawSqlite(join(rawDir, 'tether.db'));
      try {
        for (let round = 0; round < ROUNDS; round++) {
          log(`  raw sqlite round ${round + 1}/${ROUNDS}`);
          result.raw.push(measureRaw(raw, wl, round));
        }
      } finally {
        raw.close();
        rmSync(rawDir, { recursive: true, force: true });
      }
      outputs.push(report(size, result));
      const t = result.tether;
      log(
        `  ${fmt(size)}: recall p99 ${fmt(median(t.map((x) => x.recallP99)))} ms, search p99 ` +
          `${fmt(median(t.map((x) => x.searchP99)))} ms, ${fmt(median(t.map((x) => (Number.isFinite(x.remembersWrk) ? x.remembersWrk : x.remembers))))} remembers/s`,
      );
    }
  } finally {
    await server?.stop().catch(() => {});
    await store?.close().catch(() => {});
    cleanup();
  }
  const secs = (performance.now() - started) / 1000;
  process.stdout.write(
    `bench:memory — Tether memory server over HTTP vs raw better-sqlite3, same data, same run ` +
      `(node ${process.version}, medians of ${ROUNDS} rounds; targets apply at 10^6 events)\n\n` +
      `${outputs.join('\n\n')}\n\ntotal ${fmt(secs)} s; 1-min load average before the run ${fmt(loadBefore)} ` +
      `(2 cores; well above 0 means other work shared the CPU and the latency tails are noisier)\n`,
  );
}

await main();
