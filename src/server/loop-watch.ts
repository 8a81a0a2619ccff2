/**
 * @module
 * Event-loop lag made visible: a timer samples how late the loop runs it (into a histogram on
 * /metrics), and when one gap exceeds the threshold (100 ms) a warning names the routes of the
 * requests that were in flight during it — one request holding the loop is the one named, since a
 * held loop runs nothing else. Created by `app.ts`; requests are marked by its hooks.
 */
import { performance } from 'node:perf_hooks';
import type { Histogram } from 'prom-client';
import type { Logger } from '../common/log.ts';

/** Options of `LoopWatch`. */
export interface LoopWatchOptions {
  /** Observes each sample's lateness, seconds. */
  histogram: Histogram;
  log: Logger;
  /** A gap longer than this is logged with the routes in flight, ms. @default 100 */
  thresholdMs?: number;
  /** Time between samples, ms. @default 20 */
  intervalMs?: number;
}

/** One request as the watch knows it. */
interface Span {
  method: string;
  route: string;
  start: number;
  end: number | null;
}

/** Requests that ended are kept this long, to be named for a gap found just after they ended, ms. */
const KEEP_ENDED_MS = 5_000;

/** The lag sampler of one server. */
export class LoopWatch {
  readonly #histogram: Histogram;
  readonly #log: Logger;
  readonly #threshold: number;
  readonly #interval: number;
  readonly #open = new Set<Span>();
  #ended: Span[] = [];
  #timer: NodeJS.Timeout | null = null;
  #last = 0;
  /** Gaps over the threshold seen so far. */
  readonly stats = { stalls: 0 };

  constructor(options: LoopWatchOptions) {
    this.#histogram = options.histogram;
    this.#log = options.log;
    this.#threshold = options.thresholdMs ?? 100;
    this.#interval = options.intervalMs ?? 20;
    if (!(this.#interval > 0) || !(this.#threshold > 0)) {
      throw new Error(`Cannot watch the event loop as 'intervalMs' and 'thresholdMs' must be > 0`);
    }
  }

  /** Starts sampling (the timer never keeps the process alive). */
  start(): void {
    if (this.#timer) return;
    this.#last = performance.now();
    const tick = () => {
      const now = performance.now();
      const late = Math.max(0, now - this.#last - this.#interval);
      this.#histogram.observe(late / 1000);
      if (late > this.#threshold) this.#stalled(this.#last + this.#interval, now, late);
      this.#last = now;
      this.#timer = setTimeout(tick, this.#interval);
      this.#timer.unref();
    };
    this.#timer = setTimeout(tick, this.#interval);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }

  /** Marks a request begun; call `end` with what it returns. */
  begin(method: string, route: string): Span {
    const span: Span = { method, route, start: performance.now(), end: null };
    this.#open.add(span);
    return span;
  }

  end(span: Span): void {
    span.end = performance.now();
    this.#open.delete(span);
    this.#ended.push(span);
    if (this.#ended.length > 256) this.#ended = this.#ended.slice(-128);
  }

  /** Logs the gap [from, to] with every request whose life overlaps it. */
  #stalled(from: number, to: number, late: number): void {
    this.stats.stalls++;
    this.#ended = this.#ended.filter((s) => (s.end as number) > to - KEEP_ENDED_MS);
    const during = [...this.#ended, ...this.#open].filter((s) => s.start <= to && (s.end ?? to) >= from);
    const routes = [...new Set(during.map((s) => `${s.method} ${s.route}`))];
    this.#log.warn(
      { component: 'loop-watch', held_ms: Math.round(late), route: routes[0] ?? null, routes },
      routes.length > 0
        ? `the event loop was held ${Math.round(late)} ms while ${routes.join(', ')} ran`
        : `the event loop was held ${Math.round(late)} ms outside any request`,
    );
  }
}
