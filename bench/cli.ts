/**
 * @module
 * bench:cli — start-up wall time of the `tether` CLI, side by side in one run: `node -e 0` (the floor: Node's
 * own start), `tether --version` and `tether recall user` (against a memory server in a child process) from
 * the compiled build, the same from src/ through tsx (TETHER_FROM_SOURCE=1, how tests run it), and
 * `tether --help`, which loads every command module (what every command cost before the lazy loading).
 * The commands run in turn, round by round, so load drifts hit them alike; medians over the rounds, with
 * the ratio to `node -e 0` and the time above it. It builds dist/ first (`scripts/build.mjs`), so the compiled
 * figures are of the current src/.
 *
 * Flags: --runs 15 (rounds) [BENCH_ROUNDS], --no-build (measure dist/ as it is).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { TETHER_BIN } from '../test/helpers/tether-cli.ts';
import { mintAgentKey } from './lib/memory-measure.ts';
import { startChildServer } from './lib/memory-process.ts';
import { median } from './lib/stats.ts';

const { values: flags } = parseArgs({
  options: {
    runs: { type: 'string', default: process.env.BENCH_ROUNDS ?? '15' },
    'no-build': { type: 'boolean', default: false },
  },
});
const RUNS = Number(flags.runs);
if (!Number.isInteger(RUNS) || RUNS < 1 || RUNS > 200) throw new Error(`--runs must be 1..200: got ${flags.runs}`);
const ROOT = join(import.meta.dirname, '..');
const log = (s: string) => process.stderr.write(`${s}\n`);

interface Case {
  name: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /** Exit code the run must end with. */
  code: number;
}

/** Wall time of one run, ms; throws if it did not end as expected. */
function timeRun(c: Case): number {
  const t0 = performance.now();
  const res = spawnSync(process.execPath, c.args, { env: c.env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  const ms = performance.now() - t0;
  if (res.status !== c.code) throw new Error(`${c.name}: exit ${res.status}: ${res.stderr.toString().slice(0, 500)}`);
  return ms;
}

async function main(): Promise<void> {
  const loadBefore = loadavg()[0] ?? Number.NaN;
  if (!flags['no-build']) {
    log('building dist/ (scripts/build.mjs)');
    execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs')], { stdio: 'inherit' });
  }
  const dir = mkdtempSync(join(tmpdir(), 'tether-bench-cli-'));
  const server = await startChildServer(dir);
  try {
    const key = await mintAgentKey(server);
    const wrote = await fetch(`${server.url}/v1/memories`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ subject: 'user', predicate: 'prefers', value: 'dark mode' }),
    });
    if (!wrote.ok) throw new Error(`remember failed: ${wrote.status}`);
    // Only PATH and the key: no NODE_OPTIONS (no tsx loader) from this process.
    const base = { PATH: process.env.PATH ?? '', TETHER_URL: server.url, TETHER_KEY: key };
    const source = { ...base, TETHER_FROM_SOURCE: '1' };
    const cases: Case[] = [
      { name: 'node -e 0', args: ['-e', '0'], env: base, code: 0 },
      { name: 'tether --version', args: [TETHER_BIN, '--version'], env: base, code: 0 },
      { name: 'tether recall user', args: [TETHER_BIN, 'recall', 'user'], env: base, code: 0 },
      { name: 'tether --help (every module)', args: [TETHER_BIN, '--help'], env: base, code: 0 },
      { name: 'tsx: tether --version', args: [TETHER_BIN, '--version'], env: source, code: 0 },
      { name: 'tsx: tether recall user', args: [TETHER_BIN, 'recall', 'user'], env: source, code: 0 },
    ];
    // One warm-up round (the OS file cache), not counted.
    for (const c of cases) timeRun(c);
    const times = new Map(cases.map((c) => [c.name, [] as number[]]));
    for (let round = 0; round < RUNS; round++) {
      for (const c of cases) times.get(c.name)?.push(timeRun(c));
      process.stderr.write(`\r  round ${round + 1}/${RUNS}`);
    }
    process.stderr.write('\n');
    const floor = median(times.get('node -e 0') ?? []);
    const loadAfter = loadavg()[0] ?? Number.NaN;
    const lines = [
      `bench:cli — start-up wall time, median of ${RUNS} rounds (commands in turn each round)`,
      `load average (1 min): ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after; node ${process.version}`,
      '',
      `  ${'command'.padEnd(32)}${'median ms'.padStart(10)}${'x node -e 0'.padStart(13)}${'above it ms'.padStart(13)}`,
    ];
    for (const c of cases) {
      const m = median(times.get(c.name) ?? []);
      lines.push(
        `  ${c.name.padEnd(32)}${String(Math.round(m)).padStart(10)}${(m / floor).toFixed(2).padStart(13)}${String(Math.round(m - floor)).padStart(13)}`,
      );
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
