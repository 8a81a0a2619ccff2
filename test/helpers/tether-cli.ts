/**
 * @module
 * Runs `bin/tether …` as a child process for CLI tests: only PATH and the env given reach it (no TETHER_* of
 * the machine leaks in), killed after 20 s should it hang or start serving.
 */
import { execFile } from 'node:child_process';

const BIN = new URL('../../bin/tether', import.meta.url).pathname;

/** A finished run: its exit code and output. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `tether ...args` with `env` (plus PATH). */
export function runTether(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000, killSignal: 'SIGKILL' },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
