/**
 * @module
 * `bench:fairness --loop-trace`: loaded into the memory server child with `--import` (before tsx, so
 * plain JavaScript). On the main thread it appends to the file `TETHER_LOOP_TRACE_FILE` names one JSON
 * line `[startEpochMs, ms, kind]` for every GC pause (`minor`, `major`, `incremental`, `weakcb`) and
 * `[startEpochMs, ms, 'gap', runMs, waitMs]` for every gap of the event loop over `GAP_MS` (a 1 ms interval
 * timer that ran that late, timed from its run before), with how much of it the loop's thread ran on a
 * core and how much it was ready but waited for one (Linux's `/proc/thread-self/schedstat`, read at every
 * run of the timer; -1 where it cannot be read). So the bench can say what the loop was doing while one
 * of tenant B's requests waited, and whether it was working or waiting for the machine (`loop-trace.ts`).
 * A diagnostic: the timer and its reads cost the server a little CPU. Lines are written every 250 ms and
 * at exit.
 */
import { appendFileSync, readFileSync } from 'node:fs';
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
  /** The thread's time on a core and waiting for one, ns (the first two fields of schedstat); null if unread. */
  const sched = () => {
    try {
      const [run, wait] = readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
      return Number.isFinite(run) && Number.isFinite(wait) ? { run, wait } : null;
    } catch {
      return null;
    }
  };
  const ms = (ns) => Number((ns / 1e6).toFixed(2));
  let last = performance.now();
  let lastSched = sched();
  setInterval(() => {
    const now = performance.now();
    const nowSched = sched();
    if (now - last > GAP_MS) {
      const run = nowSched && lastSched ? ms(nowSched.run - lastSched.run) : -1;
      const wait = nowSched && lastSched ? ms(nowSched.wait - lastSched.wait) : -1;
      lines.push(JSON.stringify([epoch(last), Number((now - last).toFixed(2)), 'gap', run, wait]));
    }
    last = now;
    lastSched = nowSched;
  }, 1).unref();
  setInterval(flush, 250).unref();
  process.on('exit', flush);
}
