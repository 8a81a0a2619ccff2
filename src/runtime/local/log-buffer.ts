/**
 * @module
 * A bounded buffer of an instance's output lines (stdout/stderr), so logs stay visible through the
 * admin API without unbounded memory. Splits chunks into lines; a line over the cap is cut.
 * Used by local-runtime.ts.
 */
import type { LogLine } from '../runtime.ts';

const MAX_LINE = 8192;

/** Keeps the last `maxLines` lines of one instance. */
export class LogBuffer {
  readonly #lines: LogLine[] = [];
  readonly #maxLines: number;
  readonly #partial: Record<LogLine['stream'], string> = { stdout: '', stderr: '' };

  /** @param maxLines lines kept (oldest dropped first). @default 500 */
  constructor(maxLines = 500) {
    if (!Number.isInteger(maxLines) || maxLines < 1) {
      throw new Error(`Cannot keep logs as 'maxLines' must be a positive integer: got ${maxLines}`);
    }
    this.#maxLines = maxLines;
  }

  /** Adds a chunk read from `stream`. */
  write(stream: LogLine['stream'], chunk: Buffer | string): void {
    const text = this.#partial[stream] + chunk.toString();
    const parts = text.split('\n');
    let rest = parts.pop() ?? '';
    for (const p of parts) this.#push(stream, p);
    if (rest.length > MAX_LINE) {
      this.#push(stream, rest);
      rest = '';
    }
    this.#partial[stream] = rest;
  }

  /** Flushes partial lines (at exit). */
  end(): void {
    for (const stream of ['stdout', 'stderr'] as const) {
      if (this.#partial[stream]) this.#push(stream, this.#partial[stream]);
      this.#partial[stream] = '';
    }
  }

  /** A copy of the kept lines, oldest first. */
  lines(): LogLine[] {
    return this.#lines.slice();
  }

  #push(stream: LogLine['stream'], line: string): void {
    this.#lines.push({ time: new Date().toISOString(), stream, line: line.slice(0, MAX_LINE) });
    if (this.#lines.length > this.#maxLines) this.#lines.splice(0, this.#lines.length - this.#maxLines);
  }
}
