/**
 * @module
 * bench:memory-build — the memory of a real `tether memory` process (bin/tether, the servers' Node flags)
 * run from src/ through tsx (TETHER_FROM_SOURCE=1, how a checkout ran it before the build) and from the
 * compiled dist/, one after the other in one run, on the same data: RSS idle (3 s after it listens), then
 * bench:memory's HTTP load (`lib/memory-load-phase.ts`: batches of 500 statements, 4 in flight, then 10 s
 * each of recall, search and remember with 8 clients), and the RSS after the load, at the end and its peak
 * (VmHWM), with the process's thread count and the RSS of its child processes (tsx's esbuild service).
 * It builds dist/ first (`scripts/build.mjs`). Each run also prints where the bytes were at the peak and
 * at the end (`lib/rss-breakdown.ts`: anon / file / shmem, mappings by kind, the main isolate's heap).
 *
 * Flags: --events 100000 (statements loaded) [BENCH_SIZES]; --runs tsx,compiled (which, in that order);
 * --baseline DIR (also run DIR's compiled bin/tether, e.g. a worktree of main with its dist/ built:
 * before and after in one run); --env K=V (repeatable: set in every server's environment, e.g.
 * MALLOC_ARENA_MAX=8 to see what the default does).
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { newAdminKey } from '../test/helpers/memory-replicas.ts';
import { TETHER_BIN, tetherBinOf } from '../test/helpers/tether-cli.ts';
import { MemoryDataset, subjectsFor } from './lib/memory-data.ts';
import { loadAndStress } from './lib/memory-load-phase.ts';
import { MB } from './lib/memory-measure.ts';
import { type ChildServer, readCpuMicros, readMemory } from './lib/memory-process.ts';
import { formatBreakdown, type RssBreakdown, RssSampler } from './lib/rss-breakdown.ts';
import { fmt } from './lib/stats.ts';

const { values: flags } = parseArgs({
  options: {
    events: { type: 'string', default: process.env.BENCH_SIZES ?? '100000' },
    runs: { type: 'string', default: 'tsx,compiled' },
    baseline: { type: 'string' },
    env: { type: 'string', multiple: true, default: [] },
    'node-flags': { type: 'string' },
    'no-build': { type: 'boolean', default: false },
  },
});
const RUNS = flags.runs.split(',').filter(Boolean);
for (const r of RUNS) if (r !== 'tsx' && r !== 'compiled') throw new Error(`--runs: tsx or compiled, got ${r}`);
const EXTRA_ENV = Object.fromEntries(
  flags.env.map((kv) => {
    const i = kv.indexOf('=');
    if (i < 1) throw new Error(`--env must be K=V: got ${kv}`);
    return [kv.slice(0, i), kv.slice(i + 1)];
  }),
);
const EVENTS = Number(flags.events.replace(/_/g, ''));
if (!Number.isInteger(EVENTS) || EVENTS < 1000)
  throw new Error(`--events must be an integer >= 1000: got ${flags.events}`);
const ROOT = join(import.meta.dirname, '..');
const log = (s: string) => process.stderr.write(`${s}\n`);

/** Threads of a process, from /proc/<pid>/status. */
function threads(pid: number): number {
  return Number(/^Threads:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
}

/** RSS of the child processes of `pid`, bytes, and their names. */
function children(pid: number): { rss: number; names: string[] } {
  const pids = readdirSync(`/proc/${pid}/task`).flatMap((t) =>
    readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
  );
  let rss = 0;
  const names: string[] = [];
  for (const c of pids) {
    rss += readMemory(c).rss;
    names.push(readFileSync(`/proc/${c}/comm`, 'utf8').trim());
  }
  return { rss, names };
}

/**
 * `bin/tether memory` on `dataDir` run as an executable (so its shebang's flags and whatever the
 * launcher does apply, as for a user), resolved once it prints its URL.
 * @param bin bin/tether of this checkout, or of the baseline's
 */
async function startTetherMemory(dataDir: string, fromSource: boolean, bin: string): Promise<ChildServer> {
  const adminKey = newAdminKey();
  const args = ['memory', '--port', '0', '--data', dataDir, '--key-rate-limit', '0'];
  // With --node-flags, node runs bin/tether with those flags instead of the servers' (the shebang is skipped).
  const extra = flags['node-flags']?.split(' ').filter(Boolean);
  const child = spawn(extra ? process.execPath : bin, extra ? [...extra, bin, ...args] : args, {
    env: {
      PATH: process.env.PATH ?? '',
      TETHER_ADMIN_KEY: adminKey,
      ...(fromSource ? { TETHER_FROM_SOURCE: '1' } : {}),
      ...EXTRA_ENV,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1] as string);
    });
    exited.then(([code]) => reject(new Error(`tether memory exited (${code}):\n${out}`)));
  });
  const pid = child.pid as number;
  return {
    url,
    pid,
    adminKey,
    memory: () => readMemory(pid),
    cpuMicros: () => readCpuMicros(pid),
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}

interface Result {
  name: string;
  idleRss: number;
  idleThreads: number;
  idleChildren: { rss: number; names: string[] };
  loadRss: number;
  endRss: number;
  peak: number;
  stress: string;
  /** Server CPU time (all threads) over the load and the stress: the cost side of a memory flag. */
  cpuSeconds: number;
  /** Server CPU per statement loaded (to within a second of the load's end): comparable across runs. */
  loadCpuMicrosPerStatement: number;
  /** Where the bytes were at the highest sample (the peak) and at the end. */
  atPeak: RssBreakdown | undefined;
  atEnd: RssBreakdown;
}

async function measure(name: string, fromSource: boolean, tmp: string, bin = TETHER_BIN): Promise<Result> {
  const dataDir = mkdtempSync(join(tmp, 'data-'));
  log(`${name}: starting tether memory`);
  const server = await startTetherMemory(dataDir, fromSource, bin);
  log(`${name}: pid ${server.pid}`);
  try {
    await delay(3000);
    const idle = server.memory();
    const result = {
      name,
      idleRss: idle.rss,
      idleThreads: threads(server.pid),
      idleChildren: children(server.pid),
    };
    const dataset = new MemoryDataset(42, Date.now() - (EVENTS + 100_000) * 20 - 86_400_000);
    dataset.useSubjects(subjectsFor(EVENTS));
    const sampler = new RssSampler(server.pid, `${server.url}/metrics`);
    sampler.phase = 'load';
    const cpu0 = server.cpuMicros();
    // CPU time by second, to split the load's (a fixed amount of work) from the stress's (fixed time).
    const cpuAt: number[] = [];
    const tick = setInterval(() => {
      try {
        cpuAt.push(server.cpuMicros() - cpu0);
      } catch {}
    }, 1000);
    const phase = await loadAndStress(server, dataset, EVENTS, `${name} ${fmt(EVENTS)}`, EVENTS + 1);
    const cpu = server.cpuMicros() - cpu0;
    clearInterval(tick);
    sampler.stop();
    sampler.phase = 'end';
    const atEnd = await sampler.sample();
    // The load phase does not report when the stress began: from its rate, the load's length; then 10 s each.
    const loadSeconds = EVENTS / phase.loadRate;
    const loadCpu = cpuAt[Math.min(cpuAt.length, Math.round(loadSeconds)) - 1] ?? Number.NaN;
    const atPeak = sampler.peak && {
      ...sampler.peak,
      phase:
        sampler.peak.at < loadSeconds
          ? 'load'
          : (['recall', 'search', 'remember'][Math.floor((sampler.peak.at - loadSeconds) / 10)] ?? 'stress'),
    };
    return {
      ...result,
      loadRss: phase.loadRssMb * MB,
      endRss: phase.stressEndRssMb * MB,
      peak: phase.loadPeakMb * MB,
      stress: phase.stress,
      cpuSeconds: cpu / 1e6,
      loadCpuMicrosPerStatement: loadCpu / EVENTS,
      atPeak,
      atEnd,
    };
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const loadBefore = loadavg()[0] ?? Number.NaN;
  if (!flags['no-build']) {
    log('building dist/ (scripts/build.mjs)');
    execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs')], { stdio: 'inherit' });
  }
  const tmp = mkdtempSync(join(tmpdir(), 'tether-bench-memory-build-'));
  try {
    const results: Result[] = [];
    if (flags.baseline) results.push(await measure('baseline (dist/)', false, tmp, tetherBinOf(flags.baseline)));
    for (const r of RUNS) {
      results.push(
        r === 'tsx' ? await measure('tsx (src/)', true, tmp) : await measure('compiled (dist/)', false, tmp),
      );
    }
    const mb = (b: number) => (b / MB).toFixed(1);
    const lines = [
      `bench:memory-build — tether memory, ${fmt(EVENTS)} statements over HTTP (500 a batch, 4 in flight) + 30 s of stress`,
      `load average (1 min): ${loadBefore.toFixed(2)} before, ${(loadavg()[0] ?? Number.NaN).toFixed(2)} after; node ${process.version}`,
      '',
      `  ${'run'.padEnd(18)}${'idle RSS'.padStart(10)}${'threads'.padStart(9)}${'children RSS'.padStart(20)}${'after load'.padStart(12)}${'at end'.padStart(9)}${'peak'.padStart(9)}  (MB)`,
    ];
    for (const r of results) {
      lines.push(
        `  ${r.name.padEnd(18)}${mb(r.idleRss).padStart(10)}${String(r.idleThreads).padStart(9)}${`${mb(r.idleChildren.rss)}${r.idleChildren.names.length ? ` (${r.idleChildren.names.join(',')})` : ''}`.padStart(20)}${mb(r.loadRss).padStart(12)}${mb(r.endRss).padStart(9)}${mb(r.peak).padStart(9)}`,
      );
    }
    const tsx = results.find((r) => r.name.startsWith('tsx'));
    const compiled = results.find((r) => r.name.startsWith('compiled'));
    lines.push('');
    if (tsx && compiled) {
      lines.push(
        `  compiled saves ${mb(tsx.idleRss - compiled.idleRss)} MB idle, ${mb(tsx.peak - compiled.peak)} MB at the peak (plus ${mb(tsx.idleChildren.rss)} MB of child processes)`,
      );
    }
    lines.push(
      ...results.map(
        (r) =>
          `  ${r.name}: ${r.stress}; server CPU ${r.cpuSeconds.toFixed(1)} s (all threads), ${r.loadCpuMicrosPerStatement.toFixed(0)} us per statement loaded`,
      ),
      '',
      'where the bytes were (MiB):',
    );
    for (const r of results) {
      if (r.atPeak) lines.push(...formatBreakdown(`${r.name} at the peak`, r.atPeak));
      lines.push(...formatBreakdown(`${r.name} at the end`, r.atEnd));
    }
    if (flags['node-flags']) lines.push(`servers' extra node flags: ${flags['node-flags']}`);
    if (Object.keys(EXTRA_ENV).length) lines.push(`servers' extra environment: ${JSON.stringify(EXTRA_ENV)}`);
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
