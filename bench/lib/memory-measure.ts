/**
 * @module
 * What bench:memory measures on one running memory server, whatever its store: exact recall latency
 * (1 client) and rate (8 clients), text search latency (1 client, 1-2 word queries that hit),
 * remembers/s (8 clients with the node:http driver, and with wrk when installed), remembers per commit
 * and server CPU per remember (from /metrics and /proc). Recall keys and queries come from the dataset's
 * sample of the main namespace (`workload`).
 */

import { type LoadRequest, type LoadResult, LoopbackClient, runLoad } from './http-load.ts';
import { whileIdle } from './machine-cpu.ts';
import { MAIN_NAMESPACE, MemoryDataset, recallRequest, rng } from './memory-data.ts';
import type { ChildServer } from './memory-process.ts';
import { summarize } from './stats.ts';
import { CITIES } from './words.ts';
import type { WrkRemember } from './wrk-remember.ts';

/** Concurrent clients of the rate measurements. */
export const CLIENTS = 8;

export const MB = 1048576;

/** The measurements a run makes (all by default; one alone to profile it). */
export type Phase = 'recall' | 'search' | 'remember';

/** One round's figures of one server (or of the raw baseline). */
export interface Figures {
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
  /**
   * Remembers/s and p99 (ms) with wrk on `MeasureOptions.manyConnections` connections (NaN when not
   * asked): with PostgreSQL a write's latency is its round trips and the commit's WAL flush, so 8
   * closed-loop clients measure that latency more than what a replica can take.
   */
  remembersMany: number;
  rememberP99Many: number;
  /** The machine's CPU left idle (% of all cores) during that many-connection run (NaN when not run). */
  idleMany: number;
  /** Remember latency under wrk's 8 connections, ms (NaN without wrk). */
  rememberP50: number;
  rememberP99: number;
}

function shuffled<T>(items: readonly T[], rand: () => number): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [a[i], a[j]] = [a[j] as T, a[i] as T];
  }
  return a;
}

/** Recall keys and 1-2 word search queries that hit, from the dataset's sample of the main namespace. */
export function workload(dataset: MemoryDataset, seed: number) {
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
  return { keys, queries, facts: sample };
}

/**
 * The read half of `Figures`: recall and search latencies (ms), the recall rate, and the hits and empty
 * answers per search of `searches` sent (failed ones included, where the driver counts them).
 */
export function readFigures(
  recallMs: number[],
  recallPerSecond: number,
  searchMs: number[],
  searchesSent: number,
  hits: number,
  zero: number,
): Pick<Figures, 'recallP50' | 'recallP99' | 'recallRate' | 'searchP50' | 'searchP99' | 'searchHits' | 'searchZero'> {
  const r = summarize(recallMs);
  const s = summarize(searchMs);
  const searches = Math.max(1, searchesSent);
  return {
    recallP50: r.p50,
    recallP99: r.p99,
    recallRate: recallPerSecond,
    searchP50: s.p50,
    searchP99: s.p99,
    searchHits: hits / searches,
    searchZero: zero / searches,
  };
}

export async function mintAgentKey(server: ChildServer): Promise<string> {
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

/** 20,000 remember bodies in the remember phase's mix, each value ending in wrk's `@N@` placeholder. */
export function rememberBodies(size: number, subjects: number): string[] {
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
export async function metricValues<K extends string>(
  url: string,
  names: Record<K, string>,
): Promise<Record<K, number>> {
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

/**
 * The writer's group-commit counters (named without `_total` before issue 24's counters: a `--baseline`
 * checkout may be older).
 */
export const writeCounters = (url: string) =>
  metricValues(url, {
    batches: 'tether_memory_write_batches(?:_total)?',
    jobs: 'tether_memory_write_jobs(?:_total)?',
  });

/** Mean remembers per commit between two readings of `writeCounters`. */
export const perCommitBetween = (a: { batches: number; jobs: number }, b: { batches: number; jobs: number }) =>
  (b.jobs - a.jobs) / Math.max(1, b.batches - a.batches);

/** One wrk remember run (6 s): its rate and latency, remembers per commit, and server CPU per remember. */
async function rememberWithWrk(
  wrk: WrkRemember,
  url: string,
  key: string,
  tag: string,
  serverCpuMicros: () => number,
  errors: string[],
  connections = CLIENTS,
) {
  const before = await writeCounters(url);
  const cpu0 = serverCpuMicros();
  const { value: w, idle } = await whileIdle(() => wrk.run(url, key, tag, connections, 6));
  const cpu1 = serverCpuMicros();
  const after = await writeCounters(url);
  if (w.failed > 0) errors.push(`remember (wrk): ${w.failed} requests not stored`);
  return {
    ...w,
    perCommit: perCommitBetween(before, after),
    idle,
    cpuPerRemember: (cpu1 - cpu0) / Math.max(1, after.jobs - before.jobs),
  };
}

/** V8 heap and external memory of the server, bytes. */
export const heapFigures = (url: string) =>
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

export function noteErrors(phase: string, r: LoadResult, errors: string[]): void {
  if (r.errors > 0) errors.push(`${phase}: ${r.errors}/${r.requests} failed, e.g. ${r.errorSamples[0] ?? ''}`);
}

/** What `measureServer` needs. */
export interface MeasureOptions {
  url: string;
  /** An agent key of the main namespace. */
  key: string;
  /** Where remembers draw their subjects and words. */
  dataset: MemoryDataset;
  wl: ReturnType<typeof workload>;
  round: number;
  /** Failures are appended here. */
  errors: string[];
  wrk: WrkRemember | null;
  /** Events loaded (keeps the values remembered new across sizes). */
  size: number;
  serverCpuMicros: () => number;
  phases: ReadonlySet<Phase>;
  /** Also remember with wrk on this many connections (`Figures.remembersMany`). */
  manyConnections?: number;
}

/** One round of recall, search and remember measurements against one server. */
export async function measureServer(o: MeasureOptions): Promise<Figures> {
  const { url, key, dataset, wl, round, errors, wrk, size, serverCpuMicros } = o;
  const PHASES = o.phases;
  const headers = { authorization: `Bearer ${key}` };
  const rand = rng(1000 + round);
  const recallReq = (i: number): LoadRequest =>
    recallRequest(wl.keys[(i + round * 7919 + wl.keys.length * 8) % wl.keys.length]!);
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
  const many =
    wrk && PHASES.has('remember') && o.manyConnections
      ? await rememberWithWrk(wrk, url, key, `m${size}s${round}r`, serverCpuMicros, errors, o.manyConnections)
      : null;

  return {
    ...readFigures(recall.latenciesMs, recallRate.perSecond, search.latenciesMs, search.requests, hits, zero),
    remembers: remember.perSecond,
    perCommit: withWrk?.perCommit ?? perCommitBetween(writesBefore, writesAfter),
    remembersWrk: withWrk?.perSecond ?? Number.NaN,
    remembersMany: many?.perSecond ?? Number.NaN,
    rememberP99Many: many?.p99Ms ?? Number.NaN,
    idleMany: many?.idle ?? Number.NaN,
    cpuPerRemember: withWrk?.cpuPerRemember ?? Number.NaN,
    rememberP50: withWrk?.p50Ms ?? Number.NaN,
    rememberP99: withWrk?.p99Ms ?? Number.NaN,
  };
}
