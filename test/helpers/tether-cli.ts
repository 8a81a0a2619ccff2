/**
 * @module
 * The one way tests (and benchmarks) run `bin/tether`, never on a dist/ left stale by an edit of src/: the compiled
 * dist/ when it was built from the current src/ (dist/.source-hash, written by scripts/build.mjs, matches
 * scripts/source-hash.mjs; a compiled CLI starts in a fraction of tsx's CPU, which counts over the suite's
 * hundreds of CLI runs), else src/ through tsx (`TETHER_FROM_SOURCE=1`). The compiled build itself is proved by
 * test/package/pack.test.ts, which builds it afresh. test/cli/spawn-sites.test.ts checks nothing else spawns it.
 * `runTether` runs a command to its end: only PATH and the env given reach it (no TETHER_* of the machine leaks
 * in), killed after 120 s should it hang or start serving (a generous bound: a start is not what is timed).
 */
import { type ChildProcess, type ExecFileOptions, execFile, type SpawnOptions, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { SOURCE_HASH_FILE, sourceHash } from '../../scripts/source-hash.mjs';

/** Path of bin/tether. */
export const TETHER_BIN = new URL('../../bin/tether', import.meta.url).pathname;

/**
 * Path of another checkout's bin/tether, for a bench that runs that checkout's compiled `dist/` on purpose
 * (bench:memory-build's `--baseline`: its memory as deployed). Tests use `spawnTether`/`spawnTetherOf`.
 */
export function tetherBinOf(checkout: string): string {
  return join(resolve(checkout), 'bin/tether');
}

const ROOT = new URL('../..', import.meta.url).pathname;
let distFresh: boolean | undefined;

/** Whether dist/ was compiled from src/ as it is now (checked once per process: src/ does not change under a test run). */
export function distIsFresh(): boolean {
  if (distFresh === undefined) {
    let built = '';
    try {
      built = readFileSync(join(ROOT, 'dist', SOURCE_HASH_FILE), 'utf8').trim();
    } catch {
      // Not built, or built before the fingerprint existed: run src/.
    }
    distFresh = built !== '' && built === sourceHash(ROOT);
  }
  return distFresh;
}

/**
 * `env` (default: this process's) with `TETHER_FROM_SOURCE` set for this checkout: `0` (bin/tether runs dist/) when
 * dist/ matches src/, else `1` (src/ through tsx).
 */
export function fromSource(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, TETHER_FROM_SOURCE: distIsFresh() ? '0' : '1' };
}

/** `node bin/tether ...args` from source; `options.env` defaults to this process's env. */
export function spawnTether(args: readonly string[], options: SpawnOptions = {}): ChildProcess {
  return spawn(process.execPath, [TETHER_BIN, ...args], { ...options, env: fromSource(options.env) });
}

/**
 * `node ...nodeArgs <checkout>/bin/tether ...args` from source, always (the freshness check is of this checkout):
 * the bin of another checkout (a bench's baseline, e.g. main before a change), with node flags (bin/tether's
 * shebang ones are skipped when node runs it). That checkout resolves its own modules (its node_modules); a bin
 * too old to know `TETHER_FROM_SOURCE` always runs src/ through tsx.
 */
export function spawnTetherOf(
  checkout: string,
  nodeArgs: readonly string[],
  args: readonly string[],
  options: SpawnOptions = {},
): ChildProcess {
  return spawn(process.execPath, [...nodeArgs, tetherBinOf(checkout), ...args], {
    ...options,
    env: { ...(options.env ?? process.env), TETHER_FROM_SOURCE: '1' },
  });
}

/** `node bin/tether ...args` from source to its end: resolves its output, rejects on a non-zero exit (`err.code`, `err.stderr`). */
export function execTether(
  args: readonly string[],
  options: ExecFileOptions = {},
): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, [TETHER_BIN, ...args], {
    ...options,
    encoding: 'utf8',
    env: fromSource(options.env),
  });
}

/** A finished run: its exit code and output. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `tether ...args` with `env` (plus PATH) in `cwd` to its end. */
export function runTether(args: string[], env: Record<string, string> = {}, cwd?: string): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [TETHER_BIN, ...args],
      { cwd, env: fromSource({ PATH: process.env.PATH ?? '', ...env }), timeout: 120_000, killSignal: 'SIGKILL' },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
