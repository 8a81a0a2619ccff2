/**
 * @module
 * `bench:fairness --loop-trace`: loaded into the memory server child with `--import` (before tsx, so
 * plain JavaScript). On the main thread it appends to the file `TETHER_LOOP_TRACE_FILE` names one JSON
 * line `[startEpochMs, ms, kind]` for every GC pause (`minor`, `major`, `incremental`, `weakcb`) and
 * every gap of the event loop over `GAP_MS` (`gap`: a 1 ms interval timer that ran that late, timed from
 * its run before), so the bench can say what the loop was doing while one of tenant B's requests waited
 * (`loop-trace.ts`). A diagnostic: the timer costs the server a little CPU. Lines are written every
 * 250 ms and at exit.
 */
import { appendFileSync } from 'node:fs';
import { constants, PerformanceObserver, performance } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

/** Gaps of the loop shorter than this (ms) are not written: a busy loop has many of 1-2 ms. */
const GAP_MS = 3;

const file = process.env.TETHER_LOOP_TRACE_FILE;
if (isMainThread && file) {
  const kinds = new Map([
    [constants.NODE_PERFORMANCE_GC_MINOR, 'minor'],
    [constants.NODE_PERFORMANCE_GC_MAJOR, 'major'],
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL, 'incremental'],
    [constants.NODE_PERFORMANCE_GC_WEAKCB, 'weakcb'],
  ]);
  const epoch = (t) => Number((performance.timeOrigin + t).toFixed(2));
  /** @type {string[]} */
  let lines = [];
  const flush = () => {
    if (lines.length === 0) return;
    appendFileSync(file, `${lines.join('\n')}\n`);
    lines = [];
  };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = kinds.get(/** @type {{ kind?: number }} */ (e.detail)?.kind) ?? 'gc';
      lines.push(JSON.stringify([epoch(e.startTime), Number(e.duration.toFixed(2)), kind]));
    }
  }).observe({ entryTypes: ['gc'] });
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    if (now - last > GAP_MS) lines.push(JSON.stringify([epoch(last), Number((now - last).toFixed(2)), 'gap']));
    last = now;
  }, 1).unref();
  setInterval(flush, 250).unref();
  process.on('exit', flush);
}
