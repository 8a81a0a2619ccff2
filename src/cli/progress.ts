/**
 * @module
 * A small progress bar on stderr for long CLI work (export, import, bench loading). On a TTY it
 * redraws one line; otherwise it prints a line at most every 2 s, so logs stay readable.
 */

/** Options for `createProgress`. */
export interface ProgressOptions {
  label: string;
  /** Total units, when known. */
  total?: number;
  /** Unit name. @default 'items' */
  unit?: string;
  stream?: NodeJS.WriteStream;
}

/** A progress reporter. */
export interface Progress {
  /** Adds `n` done units. */
  tick(n?: number): void;
  /** Prints the final line. */
  done(): void;
}

/** Starts a progress reporter. */
export function createProgress(options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  const unit = options.unit ?? 'items';
  const start = Date.now();
  let count = 0;
  let lastDraw = 0;
  const tty = stream.isTTY === true;
  const line = () => {
    const secs = Math.max((Date.now() - start) / 1000, 0.001);
    const rate = Math.round(count / secs);
    if (options.total) {
      const frac = Math.min(count / options.total, 1);
      const width = 30;
      const filled = Math.round(frac * width);
      const bar = `${'#'.repeat(filled)}${'-'.repeat(width - filled)}`;
      return `${options.label} [${bar}] ${(frac * 100).toFixed(1)}% ${count}/${options.total} ${unit} ${rate}/s`;
    }
    return `${options.label} ${count} ${unit} ${rate}/s`;
  };
  const draw = (force: boolean) => {
    const now = Date.now();
    if (!force && now - lastDraw < (tty ? 100 : 2000)) return;
    lastDraw = now;
    stream.write(tty ? `\r${line()}\x1b[K` : `${line()}\n`);
  };
  return {
    tick(n = 1) {
      count += n;
      draw(false);
    },
    done() {
      draw(true);
      if (tty) stream.write('\n');
    },
  };
}
