/**
 * @module
 * One memory server per data folder: `<data>/server.pid` names the process using it. The SQLite store
 * is the folder's single writer (full-text indexing is deferred and its progress tracked by that
 * process), so a second server on the same folder is refused at start instead of corrupting the index.
 * A file left by a process that no longer runs is taken over.
 */
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateDir } from '../common/private-files.ts';

/** Lock files this process holds (a second server in the same process is refused too). */
const held = new Set<string>();

/** A held data folder. */
export interface DataLock {
  /** The pid file. */
  readonly path: string;
  /** Removes the pid file. Safe to call twice. */
  release(): void;
}

/**
 * Takes `dataDir` for this process.
 * @returns null for `:memory:` (nothing to share)
 * @throws {Error} when a running process holds the folder, naming its pid and the file
 */
export function lockDataDir(dataDir: string): DataLock | null {
  if (dataDir === ':memory:') return null;
  ensurePrivateDir(dataDir);
  const path = join(dataDir, 'server.pid');
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      try {
        writeSync(fd, `${process.pid}\n`);
      } finally {
        closeSync(fd);
      }
      held.add(path);
      return {
        path,
        release() {
          if (held.delete(path)) rmSync(path, { force: true });
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const pid = readPid(path);
    if (held.has(path) || (pid !== null && pid !== process.pid && running(pid))) {
      throw new Error(
        `Cannot use the data folder ${dataDir} as another memory server (pid ${pid}) uses it: stop that one, or remove ${path} if that process is not a Tether server`,
      );
    }
    rmSync(path, { force: true }); // left by a process that is gone
  }
  throw new Error(`Cannot take the data folder ${dataDir}: ${path} keeps coming back`);
}

function readPid(path: string): number | null {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by another user
  }
}
