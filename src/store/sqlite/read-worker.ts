/**
 * @module
 * A read worker of `read-pool.ts`: its own read-only connection on the WAL database and a
 * `SqliteReads` over it, answering `{id, op, args}` with `{id, result}` or `{id, error}`. Runs on a
 * worker thread only (started by the pool, as .ts under tsx or as compiled .js).
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { FoldModule } from '../log-fold-port.ts';
import { type ReadOp, SqliteReads } from './read-queries.ts';

/** A request from the pool. */
export interface ReadRequest {
  id: number;
  op: ReadOp;
  args: unknown[];
}

const port = parentPort;
if (!port) throw new Error('read-worker.ts runs on a worker thread only');
const data = workerData as { path: string; foldModule: string | null };
// The fold is the memory engine's, loaded by the URL the store was given (drivers never import memory/).
const folds = data.foldModule ? ((await import(data.foldModule)) as FoldModule) : null;
const db = new Database(data.path, { readonly: true, fileMustExist: true });
// A reader never waits for the writer in WAL mode; a purge's VACUUM may hold the file briefly.
db.pragma('busy_timeout = 5000');
// 4 MiB, a quarter of the writer's: every worker fills its own cache, counted in the server's RSS, while
// a page it misses comes from the OS page cache the connections share. Two workers at 16 MiB each held
// ~10 MB more at the peak after 1,200 searches at 3*10^5 events for the same search p50.
db.pragma('cache_size = -4096');
const reads = new SqliteReads(db, folds);
const run = reads as unknown as Record<ReadOp, (...args: unknown[]) => unknown>;

port.on('message', (msg: ReadRequest | 'close') => {
  if (msg === 'close') {
    db.close();
    port.close();
    return;
  }
  try {
    port.postMessage({ id: msg.id, result: run[msg.op].apply(reads, msg.args) });
  } catch (err) {
    port.postMessage({ id: msg.id, error: String((err as Error)?.message ?? err) });
  }
});
port.postMessage({ ready: true });
