/**
 * @module
 * Finds a command the benchmarks can use (wrk, nginx), or null when it is not installed.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** The path of `cmd`: the first existing `fallbacks` entry, else what the shell finds; null if none. */
export function which(cmd: string, fallbacks: string[] = []): string | null {
  for (const p of fallbacks) if (existsSync(p)) return p;
  try {
    return execFileSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}
