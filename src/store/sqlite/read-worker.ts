/**
 * @module
 * A read worker of `read-pool.ts`: its own read-only connection on the WAL database and a
 * `SqliteReads` over it, answering `{id, op, args}` with `{id, result}` or `{id, error}`. The bytes of
 * an answer the loop writes whole are put in a slot of the pool's shared slab (`answer-slab.ts`: no
 * new memory on the loop's heap) and named by `lent`; other bytes, or those no slot takes, are moved
 * to the event loop, not copied. The thread runs at a lower OS priority
 * (`thread-priority.ts`) and says so in its first message. Runs on a worker thread only (started by
 * the pool, as .ts under tsx or as compiled .js).
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { lowerThreadPriority } from '../../common/thread-priority.ts';
import type { AnswerTextModule } from '../answer-text-port.ts';
import type { FoldModule } from '../log-fold-port.ts';
import { AnswerSlab, SLAB_MIN_BYTES, type SlabMemory, type SlabRef } from './answer-slab.ts';
import { type ReadOp, SqliteReads } from './read-queries.ts';

/** A request from the pool. */
export interface ReadRequest {
  id: number;
  op: ReadOp;
  args: unknown[];
}

if (!parentPort) throw new Error('read-worker.ts runs on a worker thread only');
const port = parentPort;
const data = workerData as {
  path: string;
  foldModule: string | null;
  answerModule: string | null;
  slab: SlabMemory | null;
};
const priority = lowerThreadPriority();
// The fold is the memory engine's, the answer text the server's, loaded by the URLs the store was
// given (drivers never import memory/ or server/).
const folds = data.foldModule ? ((await import(data.foldModule)) as FoldModule) : null;
const answers = data.answerModule ? ((await import(data.answerModule)) as AnswerTextModule) : null;
const db = new Database(data.path, { readonly: true, fileMustExist: true });
// A reader never waits for the writer in WAL mode; a purge's VACUUM may hold the file briefly.
db.pragma('busy_timeout = 5000');
// 4 MiB, a quarter of the writer's: every worker fills its own cache, counted in the server's RSS, while
// a page it misses comes from the OS page cache the connections share. Two workers at 16 MiB each held
// ~10 MB more at the peak after 1,200 searches at 3*10^5 events for the same search p50.
db.pragma('cache_size = -4096');
const reads = new SqliteReads(db, { folds, answers });
const run = reads as unknown as Record<ReadOp, (...args: unknown[]) => unknown>;
const slab = data.slab ? new AnswerSlab(data.slab) : null;

/** Answers the loop writes whole, and gives back once written (export pages are cut and streamed: moved). */
const LENT_OPS: ReadonlySet<ReadOp> = new Set([
  'historyPageText',
  'foldFactLogsText',
  'searchBeliefsText',
  'currentBeliefsText',
]);

/** The bytes of an answer (alone or as `body`). */
function bytesOf(result: unknown): Uint8Array | null {
  const bytes = result instanceof Uint8Array ? result : (result as { body?: unknown } | null)?.body;
  return bytes instanceof Uint8Array && bytes.buffer instanceof ArrayBuffer ? bytes : null;
}

/** Posts an answer: its bytes in a slab slot when it is lent and one takes them, else moved. */
function answer(id: number, op: ReadOp, result: unknown): void {
  const bytes = bytesOf(result);
  const lend = bytes && slab && bytes.byteLength >= SLAB_MIN_BYTES && LENT_OPS.has(op);
  const lent: SlabRef | null = lend ? slab.put(bytes) : null;
  if (lent) {
    // The bytes' place in `result` is left empty: the pool puts the slot's view there.
    port.postMessage({ id, result: result === bytes ? null : { ...(result as object), body: null }, lent });
    return;
  }
  port.postMessage({ id, result }, bytes ? [bytes.buffer as ArrayBuffer] : []);
}

port.on('message', (msg: ReadRequest | 'close') => {
  if (msg === 'close') {
    db.close();
    port.close();
    return;
  }
  try {
    answer(msg.id, msg.op, run[msg.op].apply(reads, msg.args));
  } catch (err) {
    port.postMessage({ id: msg.id, error: String((err as Error)?.message ?? err) });
  }
});
port.postMessage({ ready: true, tid: priority?.tid ?? null, nice: priority?.nice ?? null });
