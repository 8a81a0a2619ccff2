/**
 * @module
 * `npm run bench:memory -- --baseline <checkout>`: this tree's memory server beside another checkout's (e.g. main
 * before a change), side by side in one run. Both are `tether memory` started from their own sources
 * (`memory-cli-server.ts`), each on its own store (SQLite folder, or its own PostgreSQL database), loaded over
 * HTTP with the same synthetic events in alternating chunks; then each gets the 10 s memory phase, and after a
 * restart the measurements of `memory-measure.ts` in interleaved rounds (which side goes first swaps each round).
 * Each store is its own: an older checkout cannot open a database a newer one has migrated.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createProgress } from '../../src/cli/progress.ts';
import { loadOverHttp } from './http-loader.ts';
import { baselineReport, type SideResult, worseRows } from './memory-baseline-report.ts';
import { type CliServer, startCliServer } from './memory-cli-server.ts';
import { type MemoryDataset, subjectsFor } from './memory-data.ts';
import { CLIENTS, heapFigures, MB, measureServer, mintAgentKey, type Phase, workload } from './memory-measure.ts';
import type { ChildPostgres } from './memory-process.ts';
import { stressPhases } from './memory-stress.ts';
import { fmt } from './stats.ts';
import type { WrkRemember } from './wrk-remember.ts';

/** One of the two servers compared. */
export interface Side {
  name: 'this' | 'baseline';
  checkout: string;
  dataDir: string;
  /** PostgreSQL instead of SQLite: the side's own database. */
  postgres?: ChildPostgres;
  /** The events it is loaded with (the same seed on both sides). */
  dataset: MemoryDataset;
}

/** How the comparison runs, the same for every size. */
export interface BaselineSettings {
  rounds: number;
  phases: ReadonlySet<Phase>;
  nodeArgs: string[];
  wrk: WrkRemember | null;
  /** Remembers of the rounds draw from their own generator (one per side, the same seed). */
  writes: (size: number, subjects: number) => MemoryDataset;
}

/** Servers running now, so a signal handler can stop them. */
export const baselineServers = new Set<CliServer>();

const log = (s: string) => process.stderr.write(`${s}\n`);

/** This tree's folder. */
const THIS_TREE = resolve(import.meta.dirname, '../..');

/** `uptime`'s line: the machine's load, printed beside the figures. */
export const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();

/** `<short hash> <subject>` of a checkout's HEAD, or its path when it is no git checkout. */
export function describeCheckout(dir: string): string {
  try {
    const line = execFileSync('git', ['-C', dir, 'log', '-1', '--format=%h %s'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['-C', dir, 'status', '--porcelain', '--untracked-files=no'], {
      encoding: 'utf8',
    });
    return `${line.length > 72 ? `${line.slice(0, 71)}…` : line}${dirty.trim() ? ' (+ uncommitted changes)' : ''}`;
  } catch {
    return resolve(dir);
  }
}

async function start(side: Side, s: BaselineSettings): Promise<CliServer> {
  const server = await startCliServer({
    checkout: side.checkout,
    dataDir: side.dataDir,
    label: side.name,
    nodeArgs: s.nodeArgs,
    postgres: side.postgres,
  });
  baselineServers.add(server);
  return server;
}

async function stop(server: CliServer): Promise<void> {
  await server.stop();
  baselineServers.delete(server);
}

const emptyResult = (): SideResult => ({
  sent: 0,
  loadFailed: 0,
  loadSecs: 0,
  loadRate: Number.NaN,
  loadRssMb: Number.NaN,
  loadPeakMb: Number.NaN,
  stressEndRssMb: Number.NaN,
  stress: '',
  dbMb: Number.NaN,
  figures: [],
  startRssMb: Number.NaN,
  rssMb: Number.NaN,
  peakMb: Number.NaN,
  heapUsedMb: Number.NaN,
  errors: [],
  warnings: 0,
  firstWarning: '',
});

function noteWarnings(r: SideResult, server: CliServer): void {
  const w = server.warnings();
  r.warnings += w.count;
  r.firstWarning ||= w.first;
}

/** Which side goes first in turn `i`: swapped each time, so neither always has the quieter moment. */
const inTurn = <T>(pair: readonly [T, T], i: number): T[] => (i % 2 === 0 ? [...pair] : [pair[1], pair[0]]);

/**
 * Loads `size - loaded` more events into both sides and measures them.
 * @param subjects distinct subjects of this size (both datasets are already set to them)
 */
export async function runBaselineSize(
  s: BaselineSettings,
  sides: readonly [Side, Side],
  size: number,
  loaded: number,
  subjects: number,
): Promise<[SideResult, SideResult]> {
  for (const side of sides) mkdirSync(side.dataDir, { recursive: true });
  const results = new Map(sides.map((side) => [side.name, emptyResult()]));
  const res = (side: Side) => results.get(side.name) as SideResult;
  const toLoad = Math.max(0, size - loaded);

  // Load: both servers up, chunks sent to one then the other, so each loads under the same conditions.
  const servers = new Map<Side['name'], CliServer>();
  for (const side of sides) servers.set(side.name, await start(side, s));
  const server = (side: Side) => servers.get(side.name) as CliServer;
  const chunk = Math.max(10_000, Math.ceil(toLoad / 20));
  const progress = createProgress({ label: `loading ${fmt(size)} (both)`, total: toLoad * 2, unit: 'statements' });
  for (let done = 0, turn = 0; done < toLoad; done += chunk, turn++) {
    const n = Math.min(chunk, toLoad - done);
    for (const side of inTurn(sides, turn)) {
      const t0 = performance.now();
      const sent = await loadOverHttp(side.dataset, {
        url: server(side).url,
        adminKey: server(side).adminKey,
        count: n,
        onProgress: (k) => progress.tick(k),
      });
      const r = res(side);
      r.loadSecs += (performance.now() - t0) / 1000;
      r.sent += sent.sent;
      r.loadFailed += sent.failed;
    }
  }
  progress.done();
  for (const side of sides) {
    const r = res(side);
    r.loadRate = r.sent / Math.max(r.loadSecs, 0.001);
    r.loadRssMb = server(side).memory().rss / MB;
  }

  // The memory phase: 10 s each of recall, search and remember with 8 clients, one side after the other.
  for (const side of inTurn(sides, size)) {
    log(`  ${side.name}: 10 s each of recall, search, remember (${CLIENTS} clients)`);
    const srv = server(side);
    const key = await mintAgentKey(srv);
    // Its remembers draw from their own generator: a side that did more of them must not change what it loads next.
    const done = await stressPhases(srv.url, key, s.writes(size, subjects), workload(side.dataset, size + 1), {
      clients: CLIENTS,
      seconds: 10,
    });
    const mem = srv.memory();
    const r = res(side);
    r.stressEndRssMb = mem.rss / MB;
    r.loadPeakMb = mem.peak / MB;
    r.stress =
      `loaded ${fmt(r.sent)} statements (${r.loadFailed} requests failed, ${fmt(r.loadRate)}/s), then ` +
      `${fmt(done.recall)} recalls, ${fmt(done.search)} searches, ${fmt(done.remember)} remembers (${done.errors} failed)`;
  }
  for (const side of sides) {
    noteWarnings(res(side), server(side));
    await stop(server(side));
    if (!side.postgres) res(side).dbMb = statSync(join(side.dataDir, 'tether.db')).size / 1e6;
  }

  // The measurements: both restarted on their data, then interleaved rounds.
  for (const side of sides) servers.set(side.name, await start(side, s));
  const keys = new Map<Side['name'], string>();
  const writes = new Map<Side['name'], MemoryDataset>();
  const wl = workload(sides[0].dataset, size); // the same on both sides: same seed, same events
  for (const side of sides) {
    res(side).startRssMb = server(side).memory().rss / MB;
    keys.set(side.name, await mintAgentKey(server(side)));
    writes.set(side.name, s.writes(size, subjects));
  }
  for (let round = 0; round < s.rounds; round++) {
    for (const side of inTurn(sides, round)) {
      log(`  round ${round + 1}/${s.rounds}: ${side.name}`);
      const srv = server(side);
      res(side).figures.push(
        await measureServer({
          url: srv.url,
          key: keys.get(side.name) as string,
          dataset: writes.get(side.name) as MemoryDataset,
          wl,
          round,
          errors: res(side).errors,
          wrk: s.wrk,
          size,
          serverCpuMicros: () => srv.cpuMicros(),
          phases: s.phases,
        }),
      );
    }
  }
  for (const side of sides) {
    const mem = server(side).memory();
    const r = res(side);
    r.rssMb = mem.rss / MB;
    r.peakMb = mem.peak / MB;
    r.heapUsedMb = (await heapFigures(server(side).url)).used / MB;
    noteWarnings(r, server(side));
    await stop(server(side));
  }
  return [res(sides[0]), res(sides[1])];
}

/** What `compareMemoryBaseline` needs beyond the settings. */
export interface CompareOptions extends BaselineSettings {
  /** The other checkout's folder. */
  checkout: string;
  sizes: number[];
  /** Temp folder of the run (removed by the caller). */
  tmp: string;
  /** Two datasets of the same seed and start, one per side. */
  datasets: readonly [MemoryDataset, MemoryDataset];
  /** Makes the wrk remember run of a size (null without wrk). */
  prepareWrk: (size: number, subjects: number) => Promise<WrkRemember | null>;
  /** PostgreSQL: makes a new empty database (one per side) and the pool size of each server. */
  postgres?: { createDatabase: () => Promise<string>; poolSize: number; adminKey: string };
}

/** Runs every size on both sides; returns the report (one table per size, uptime lines, the verdict). */
export async function compareMemoryBaseline(o: CompareOptions): Promise<string> {
  const store = o.postgres ? `PostgreSQL (one replica each, own database)` : 'SQLite (own folder each)';
  const labels = {
    this: describeCheckout(THIS_TREE),
    baseline: `${describeCheckout(o.checkout)} (${o.checkout})`,
    store,
  };
  const out: string[] = [`uptime before: ${uptime()}`];
  log(`this: ${labels.this}\nbaseline: ${labels.baseline}`);
  const sides: [Side, Side] = [
    { name: 'this', checkout: THIS_TREE, dataDir: join(o.tmp, 'this'), dataset: o.datasets[0] },
    { name: 'baseline', checkout: o.checkout, dataDir: join(o.tmp, 'baseline'), dataset: o.datasets[1] },
  ];
  if (o.postgres) {
    for (const side of sides) {
      side.postgres = {
        url: await o.postgres.createDatabase(),
        poolSize: o.postgres.poolSize,
        adminKey: o.postgres.adminKey,
      };
    }
  }
  const worse: string[] = [];
  let loaded = 0;
  for (const size of o.sizes) {
    const subjects = subjectsFor(size);
    for (const side of sides) side.dataset.useSubjects(subjects);
    const settings = { ...o, wrk: await o.prepareWrk(size, subjects) };
    const [a, b] = await runBaselineSize(settings, sides, size, loaded, subjects);
    const report = baselineReport(size, labels, a, b);
    out.push(report, `uptime after ${fmt(size)}: ${uptime()}`);
    worse.push(...worseRows(report).map((row) => `${fmt(size)}: ${row}`));
    loaded = size;
  }
  out.push(
    worse.length === 0
      ? 'verdict: no held figure worse than the baseline by more than 10%'
      : `verdict: worse than the baseline by more than 10%: ${worse.join('; ')}`,
  );
  return out.join('\n\n');
}
