/**
 * @module
 * One size of bench:memory on SQLite: loads the events (over HTTP into a server child, with the memory
 * phase of `memory-load-phase.ts`, or in-process through the engine's import), then restarts the server
 * on that data and measures it (`memory-measure.ts`) for a number of rounds, and, unless asked not to,
 * runs the same point read, FTS query and single-row insert on raw better-sqlite3 on a copy of the file.
 */
import { copyFileSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createProgress } from '../../src/cli/progress.ts';
import { systemClock } from '../../src/common/clock.ts';
import { newEventId } from '../../src/common/ids.ts';
import { MemoryEngine } from '../../src/memory/engine.ts';
import { starterRegistry } from '../../src/memory/registry.ts';
import { RegistryBook } from '../../src/memory/registry-book.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { MAIN_NAMESPACE, type MemoryDataset, rng } from './memory-data.ts';
import { loadAndStress, type MemoryPhase, noMemoryPhase } from './memory-load-phase.ts';
import {
  type Figures,
  heapFigures,
  MB,
  measureServer,
  mintAgentKey,
  type Phase,
  readFigures,
  workload,
} from './memory-measure.ts';
import { type ChildServer, startChildServer } from './memory-process.ts';
import { RawSqlite } from './raw-sqlite.ts';
import { fmt } from './stats.ts';
import type { WrkRemember } from './wrk-remember.ts';

/** Everything measured at one size. */
export interface SizeResult extends MemoryPhase {
  events: number;
  subjects: number;
  loadSecs: number;
  dbMb: number;
  tether: Figures[];
  raw: Figures[];
  rssMb: number;
  peakMb: number;
  startRssMb: number;
  heapUsedMb: number;
  heapTotalMb: number;
  externalMb: number;
  errors: string[];
}

/** How a run goes, the same for every size. */
export interface RunSettings {
  rounds: number;
  phases: ReadonlySet<Phase>;
  /** Extra node flags of the server child. */
  nodeArgs: string[];
  /** Load over HTTP (the memory target's load) rather than in-process through the engine's import. */
  overHttp: boolean;
  /** Also measure raw better-sqlite3 on a copy of the database. */
  raw: boolean;
  wrk: WrkRemember | null;
  /** PostgreSQL: also measure one and two replicas each capped at this many thousandths of a core. */
  replicaCpu?: number;
  /** Temp folder of the run (removed by the caller). */
  tmp: string;
  /** Remembers draw from their own generator, so rounds never change the data loaded next. */
  writes: (size: number, subjects: number) => MemoryDataset;
}

const log = (s: string) => process.stderr.write(`${s}\n`);
const BATCH = 5_000;

/** Holds the server a size runs, so a signal handler can stop it. */
export const current: { server: ChildServer | null } = { server: null };

/**
 * Loads `size - loaded` more events into the SQLite store of `dataDir` and measures it.
 * @param subjects distinct subjects of this size (the dataset is already set to them)
 */
export async function runSqliteSize(
  s: RunSettings,
  dataset: MemoryDataset,
  dataDir: string,
  size: number,
  loaded: number,
  subjects: number,
): Promise<SizeResult> {
  const toLoad = Math.max(0, size - loaded);
  let memoryPhase = noMemoryPhase();
  const t0 = performance.now();
  if (s.overHttp) {
    current.server = await startChildServer(dataDir, s.nodeArgs);
    memoryPhase = await loadAndStress(current.server, dataset, toLoad, `sqlite ${fmt(size)}`, size + 1);
    await current.server.stop();
    current.server = null;
  } else {
    const store = openSqliteStore({ dataDir });
    try {
      // Through the engine's import, so the "now" projection of beliefs is built as it would be.
      const loader = new MemoryEngine({
        store,
        registries: new RegistryBook(store, systemClock, starterRegistry('personal')),
        clock: systemClock,
      });
      const progress = createProgress({ label: `loading ${fmt(size)}`, total: toLoad, unit: 'statements' });
      for (let left = toLoad; left > 0; left -= BATCH) {
        const n = Math.min(BATCH, left);
        await loader.importEvents(dataset.next(n));
        progress.tick(n);
      }
      progress.done();
    } finally {
      await store.close();
    }
  }
  const loadSecs = (performance.now() - t0) / 1000;
  const counting = openSqliteStore({ dataDir });
  const events = await counting.countEvents();
  await counting.close();

  const dbFile = join(dataDir, 'tether.db');
  const rawDir = join(s.tmp, `raw-${size}`);
  if (s.raw) {
    mkdirSync(rawDir);
    copyFileSync(dbFile, join(rawDir, 'tether.db'));
  }
  const result: SizeResult = {
    events,
    subjects,
    loadSecs,
    dbMb: statSync(dbFile).size / 1e6,
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
  const wl = workload(dataset, size);
  const writes = s.writes(size, subjects);
  log(`starting memory server on ${fmt(events)} events`);
  const server = await startChildServer(dataDir, s.nodeArgs);
  current.server = server;
  result.startRssMb = server.memory().rss / MB;
  const key = await mintAgentKey(server);
  for (let round = 0; round < s.rounds; round++) {
    log(`  sqlite round ${round + 1}/${s.rounds}`);
    result.tether.push(
      await measureServer({
        url: server.url,
        key,
        dataset: writes,
        wl,
        round,
        errors: result.errors,
        wrk: s.wrk,
        size,
        serverCpuMicros: () => server.cpuMicros(),
        phases: s.phases,
      }),
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
  current.server = null;

  if (s.raw) {
    const raw = new RawSqlite(join(rawDir, 'tether.db'));
    try {
      for (let round = 0; round < s.rounds; round++) {
        log(`  raw sqlite round ${round + 1}/${s.rounds}`);
        result.raw.push(measureRaw(raw, wl, round));
      }
    } finally {
      raw.close();
      rmSync(rawDir, { recursive: true, force: true });
    }
  }
  return result;
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
  return {
    ...readFigures(point.lat, point.perSecond, search.lat, search.lat.length, hits, zero),
    remembers: insert.perSecond,
    perCommit: 1,
    remembersWrk: Number.NaN,
    remembersMany: Number.NaN,
    rememberP99Many: Number.NaN,
    idleMany: Number.NaN,
    cpuPerRemember: Number.NaN,
    rememberP50: Number.NaN,
    rememberP99: Number.NaN,
  };
}
