/**
 * @module
 * A small progress reporter on stderr for long CLI work (export, import, bench loading). On a TTY it
 * redraws one line; otherwise it prints a plain line every 2 s while the work lasts and nothing at the
 * end, so a log gets each figure once. The command prints its own summary line after `done()`.
 */

/** Options for `createProgress`. */
export interface ProgressOptions {
  label: string;
  /** Total units, when known. */
  total?: number;
  /** Unit name. @default 'items' */
  unit?: string;
  stream?: NodeJS.WriteStream | { isTTY?: boolean; write(text: string): unknown };
  /** Clock in ms (tests). @default Date.now */
  now?: () => number;
}

/** A progress reporter. */
export interface Progress {
  /** Adds `n` done units. */
  tick(n?: number): void;
  /** Ends the line on a TTY (drawn at its final figure); prints nothing otherwise. */
  done(): void;
  /** Units done so far. */
  readonly count: number;
  /** Seconds since the start. */
  elapsedSeconds(): number;
}

/** Lines a non-TTY stream gets at most this often, ms. */
const PLAIN_EVERY_MS = 2000;

/** Starts a progress reporter. */
export function createProgress(options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  const unit = options.unit ?? 'items';
  const now = options.now ?? Date.now;
  const start = now();
  let count = 0;
  const tty = stream.isTTY === true;
  // A TTY redraws at once; a plain stream waits a first interval, so quick work prints no progress at all.
  let lastDraw = tty ? 0 : start;
  const elapsedSeconds = () => Math.max((now() - start) / 1000, 0.001);
  const line = () => {
    const rate = Math.round(count / elapsedSeconds());
    if (options.total) {
      const frac = Math.min(count / options.total, 1);
      const width = 30;
      const filled = Math.round(frac * width);
      const bar = `${'#'.repeat(filled)}${'-'.repeat(width - filled)}`;
      return `${options.label} [${bar}] ${(frac * 100).toFixed(1)}% ${count}/${options.total} ${unit} ${rate}/s`;
    }
    return `${options.label} ${count} ${unit} ${rate}/s`;
  };
  const draw = () => {
    const t = now();
    if (t - lastDraw < (tty ? 100 : PLAIN_EVERY_MS)) return;
    lastDraw = t;
    stream.write(tty ? `\r${line()}\x1b[K` : `${line()}\n`);
  };
  return {
    tick(n = 1) {
      count += n;
      draw();
    },
    done() {
      if (tty) stream.write(`\r${line()}\x1b[K\n`);
    },
    get count() {
      return count;
    },
    elapsedSeconds,
  };
}
