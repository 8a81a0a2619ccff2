/**
 * @module
 * The memory target's phase of bench:memory, for any store: load events into a running server over
 * HTTP (`http-loader.ts`: batches of 500 statements, 4 requests in flight, with progress), then 10 s
 * each of recall, search and remember with 8 clients (`memory-stress.ts`), reading the server's RSS
 * after the load, at the end, and its peak (VmHWM) from /proc.
 */
import { createProgress } from '../../src/cli/progress.ts';
import { loadOverHttp } from './http-loader.ts';
import type { MemoryDataset } from './memory-data.ts';
import { CLIENTS, MB, mintAgentKey, workload } from './memory-measure.ts';
import type { ChildServer } from './memory-process.ts';
import { stressPhases } from './memory-stress.ts';
import { fmt } from './stats.ts';

/** RSS figures of a server loaded over HTTP then stressed, MB, and what it did. */
export interface MemoryPhase {
  loadRssMb: number;
  stressEndRssMb: number;
  loadPeakMb: number;
  stress: string;
  /** Statements per second of the load. */
  loadRate: number;
}

/** A phase that did not run. */
export const noMemoryPhase = (): MemoryPhase => ({
  loadRssMb: Number.NaN,
  stressEndRssMb: Number.NaN,
  loadPeakMb: Number.NaN,
  stress: '',
  loadRate: Number.NaN,
});

/**
 * Loads `count` statements from `dataset` into `server`, then stresses it.
 * @param label shown on the progress line, e.g. `postgres 1,000,000`
 * @param seed of the stress workload's keys and queries
 */
export async function loadAndStress(
  server: ChildServer,
  dataset: MemoryDataset,
  count: number,
  label: string,
  seed: number,
): Promise<MemoryPhase> {
  const progress = createProgress({ label: `loading ${label}`, total: count, unit: 'statements' });
  const t0 = performance.now();
  const sent = await loadOverHttp(dataset, {
    url: server.url,
    adminKey: server.adminKey,
    count,
    onProgress: (n) => progress.tick(n),
  });
  progress.done();
  const loadRate = sent.sent / ((performance.now() - t0) / 1000);
  const loadRssMb = server.memory().rss / MB;
  const key = await mintAgentKey(server);
  process.stderr.write(`  10 s each of recall, search, remember (${CLIENTS} clients)\n`);
  const done = await stressPhases(server.url, key, dataset, workload(dataset, seed), { clients: CLIENTS, seconds: 10 });
  const mem = server.memory();
  return {
    loadRssMb,
    stressEndRssMb: mem.rss / MB,
    loadPeakMb: mem.peak / MB,
    loadRate,
    stress:
      `loaded ${fmt(sent.sent)} statements over HTTP (${sent.failed} requests failed, ${fmt(loadRate)}/s), then ` +
      `${fmt(done.recall)} recalls, ${fmt(done.search)} searches, ${fmt(done.remember)} remembers (${done.errors} failed)`,
  };
}
