/**
 * @module
 * Instance output goes to files (`<stateDir>/<name>.out` / `.err`, opened O_APPEND), not pipes: a pipe
 * breaks when the gateway dies, and an app writing to it would get EPIPE, while an instance must outlive the
 * gateway to be adopted. `LogTail` reads what was appended into a bounded `LogBuffer`, and truncates a file
 * past `MAX_FILE_BYTES` (O_APPEND writers then go on at the new end; a line written in between may be lost).
 * Used by local-runtime.ts.
 */
import { closeSync, ftruncateSync, openSync, readSync } from 'node:fs';
import { resolve } from 'node:path';
import type { LogLine } from '../runtime.ts';
import type { OutputFiles } from './isolation/sandbox.ts';
import { LogBuffer } from './log-buffer.ts';

/** A file past this size is truncated after it was read (bytes). */
const MAX_FILE_BYTES = 1 << 20;
const CHUNK = 64 * 1024;

/** The paths of the two output files of `instance`. */
export function outputPaths(dir: string, instance: string): OutputFiles {
  // Absolute: a waiting launcher opens them after it changed to the instance's working folder.
  return { out: resolve(dir, `${instance}.out`), err: resolve(dir, `${instance}.err`) };
}

/** Opens (creates 0600, O_APPEND) the two output files of `instance` for a child's stdio; close them after spawn. */
export function openOutputFiles(dir: string, instance: string): { out: number; err: number } {
  const paths = outputPaths(dir, instance);
  return { out: openSync(paths.out, 'a', 0o600), err: openSync(paths.err, 'a', 0o600) };
}

/** Follows the output files of one instance. */
export class LogTail {
  readonly buffer: LogBuffer;
  readonly #fds: Record<LogLine['stream'], number | null>;
  readonly #offsets: Record<LogLine['stream'], number> = { stdout: 0, stderr: 0 };

  /**
   * @param fromEnd start at the current end (an adopted instance: what it wrote before is not shown again)
   */
  constructor(dir: string, instance: string, maxLines: number, fromEnd = false) {
    this.buffer = new LogBuffer(maxLines);
    const paths = outputPaths(dir, instance);
    this.#fds = { stdout: openRead(paths.out), stderr: openRead(paths.err) };
    if (fromEnd) for (const s of ['stdout', 'stderr'] as const) this.#offsets[s] = this.#drain(s, false);
  }

  /** Reads what was appended since the last call. */
  poll(): void {
    for (const s of ['stdout', 'stderr'] as const) this.#drain(s, true);
  }

  /** Reads the rest, flushes partial lines and closes the files. */
  end(): void {
    this.poll();
    this.buffer.end();
    for (const s of ['stdout', 'stderr'] as const) {
      const fd = this.#fds[s];
      if (fd !== null) closeSync(fd);
      this.#fds[s] = null;
    }
  }

  /** Reads from the stream's offset to its end; returns the new offset. */
  #drain(stream: LogLine['stream'], keep: boolean): number {
    const fd = this.#fds[stream];
    if (fd === null) return 0;
    const buf = Buffer.allocUnsafe(CHUNK);
    for (;;) {
      const n = readSync(fd, buf, 0, CHUNK, this.#offsets[stream]);
      if (n <= 0) break;
      this.#offsets[stream] += n;
      if (keep) this.buffer.write(stream, buf.subarray(0, n));
    }
    if (this.#offsets[stream] > MAX_FILE_BYTES) {
      ftruncateSync(fd, 0);
      this.#offsets[stream] = 0;
    }
    return this.#offsets[stream];
  }
}

function openRead(path: string): number | null {
  try {
    return openSync(path, 'r+');
  } catch {
    return null;
  }
}
