/**
 * @module
 * The SQLite purge's steps, each holding the writer a few ms, so other tenants' writes go on between
 * them (issue 21) and no file under the data folder keeps a byte of the namespace after it:
 * - a namespace with nothing stored is not touched at all;
 * - its rows (events, beliefs, resume records) are deleted in transactions of at most the shared `SLICE_MS` of
 *   work, yielding to the event loop between them; `secure_delete` zeroes every freed cell and page,
 *   and FTS5's `secure-delete` option takes the erased rows' entries out of the index segments;
 * - what FTS5 keeps even so (a term that was the first of a segment's leaf page stays there) goes with
 *   an incremental merge of every segment into one (`'merge', -N`: N pages per step, a step per
 *   turn), which rewrites each segment that existed when the rows were deleted;
 * - the resume tables that held rows of it are rebuilt into fresh pages, in steps too
 *   (`table-rebuild.ts`: a balanced b-tree page keeps old cell copies that secure_delete misses);
 * - the WAL, whose older frames still hold the pages as they were, is copied back by a PASSIVE
 *   checkpoint on the checkpointer's thread (writes go on), its file's dead tail cut in short steps
 *   (writes held during each), then truncated by a TRUNCATE checkpoint there, during which the store
 *   holds its writes: only the frames written meanwhile are left to copy, and a short file to cut.
 * No VACUUM: its cost grows with the whole database, and it held every write for all of it.
 * Run in order by `purge-runner.ts`.
 */
import { performance } from 'node:perf_hooks';
import type Database from 'better-sqlite3';
import { ChunkSizer } from '../../common/chunk-sizer.ts';
import { letOthersRun, SLICE_MS, TimeSlice } from '../../common/time-slice.ts';
import { RESUME_TABLES } from '../resume-namespaces.ts';
import type { Checkpointer, ShrinkStep } from './checkpointer.ts';
import { ftsMergeStep, MERGE_PAGES } from './fts-queue.ts';

/** Rows picked per statement inside a transaction (the slice's time and the cost of the ones before decide how many statements). */
const PICK = 32;

/** Fewest rows a transaction of `inSlices` is given (at most its `pick`), however much the ones before cost. */
const MIN_SLICE_ROWS = 8;

/** Most rows one transaction of `inSlices` handles (its time and its commit's bound it first). */
const MAX_SLICE_ROWS = 8192;

/** Most PASSIVE passes before the TRUNCATE while writes keep coming (it then copies what they added). */
const MAX_CATCH_UPS = 8;

/** Most the WAL file is cut by per step before the TRUNCATE (about a millisecond of ftruncate here). */
const SHRINK_BYTES = 4 * 1024 * 1024;

/** Most steps of cutting the WAL file (1 GiB at 4 MiB a step, with room for steps a commit came before). */
const MAX_SHRINK_STEPS = 512;

/** Most merge steps before a purge finishes the merge in one go (other writes kept adding segments). */
const MAX_MERGE_STEPS = 100_000;

/** What the purge needs of the store. */
export interface PurgeContext {
  db: Database.Database;
  sql: (text: string) => Database.Statement;
  /** Flushes the deferred FTS rows, then sets the FTS mark to `seq`. */
  resetFtsMark: (seq: number) => void;
  /** Records durably that `table` must be rebuilt, before its rows are deleted (`table-rebuild.ts`). */
  markRebuild: (table: string) => void;
}

/** Purge steps run so far (tests follow a purge by them). */
export interface PurgeProgress {
  /** Delete transactions committed (the old tables' of a rebuild included). */
  deletes: number;
  /** Copy transactions of table rebuilds committed. */
  copies: number;
  /** FTS merge steps run. */
  merges: number;
  /** Resume tables rebuilt into fresh pages (`table-rebuild.ts`). */
  rebuilds: number;
  /** Steps that cut the WAL file's dead tail before its TRUNCATE. */
  walCuts: number;
}

/** How `inSlices` cuts its work. */
export interface SliceOptions {
  /** Called after each committed transaction that handled rows. */
  committed: () => void;
  /** Most rows one call of the step is asked to handle. @default 32 */
  pick?: number;
  /** Longest transaction in ms (each runs at least one step). @default SLICE_MS */
  sliceMs?: number;
  /** The clock transactions are timed by (ms; a test's double). @default performance.now */
  now?: () => number;
}

/**
 * Runs `step(limit)` (which handles at most `limit` rows, at most `pick`, and says how many) again
 * and again in one transaction until nothing is left, `sliceMs` passed, or the transaction has the
 * rows its predecessors' cost leaves room for; then lets the event loop turn; until done. The commit
 * is part of a transaction's cost (it writes what the statements changed, index pages among them),
 * so each is timed whole and the next sized by it (`ChunkSizer`).
 * @returns rows handled
 */
export async function inSlices(
  db: Database.Database,
  step: (limit: number) => number,
  o: SliceOptions,
): Promise<number> {
  const pick = o.pick ?? PICK;
  const sliceMs = o.sliceMs ?? SLICE_MS;
  if (!Number.isInteger(pick) || pick < 1) throw new Error(`Cannot slice as 'pick' must be ≥ 1: got ${pick}`);
  const sizer = new ChunkSizer({
    max: MAX_SLICE_ROWS,
    budgetMs: sliceMs,
    first: pick,
    min: Math.min(pick, MIN_SLICE_ROWS),
  });
  const now = o.now ?? (() => performance.now());
  let total = 0;
  const slice = db.transaction((rows: number) => {
    const time = new TimeSlice(null, sliceMs);
    let n = 0;
    while (n < rows) {
      const limit = Math.min(pick, rows - n);
      const got = step(limit);
      n += got;
      if (got < limit || time.due()) break;
    }
    return n;
  });
  for (;;) {
    const started = now();
    const n = slice(sizer.size) as number;
    sizer.took(n, now() - started);
    total += n;
    if (n === 0) return total;
    o.committed();
    await letOthersRun();
  }
}

/**
 * Deletes every row of `namespace`, a slice of work per transaction: events, beliefs, then each
 * resume table (leases, working state, turns, checkpoints…).
 * @returns events erased, whether any row at all was, and the resume tables that held rows of it
 */
export async function deleteNamespaceRows(
  ctx: PurgeContext,
  namespace: string,
  progress: PurgeProgress = { deletes: 0, copies: 0, merges: 0, rebuilds: 0, walCuts: 0 },
): Promise<{ events: number; touched: boolean; resumeTables: string[] }> {
  const { db, sql } = ctx;
  const pick = sql('SELECT seq FROM events WHERE namespace = ? LIMIT ?').pluck();
  const delFts = sql('DELETE FROM events_fts WHERE rowid = ?');
  const delEvent = sql('DELETE FROM events WHERE seq = ?');
  const delBeliefs = sql(
    `DELETE FROM beliefs WHERE (namespace, subject, predicate, observed_at, event_id) IN
       (SELECT namespace, subject, predicate, observed_at, event_id FROM beliefs WHERE namespace = ? LIMIT ?)`,
  );
  const committed = () => progress.deletes++;
  const events = await inSlices(
    db,
    (limit) => {
      const seqs = pick.all(namespace, limit) as number[];
      for (const seq of seqs) {
        delFts.run(seq);
        delEvent.run(seq);
      }
      return seqs.length;
    },
    { committed },
  );
  let touched = events > 0;
  if ((await inSlices(db, (limit) => delBeliefs.run(namespace, limit).changes, { committed })) > 0) touched = true;
  const resumeTables: string[] = [];
  for (const table of RESUME_TABLES) {
    // Every resume table leads its key (or its primary key index) with namespace; leases has no rowid.
    const key = table === 'leases' ? 'namespace' : 'rowid';
    if (sql(`SELECT 1 FROM ${table} WHERE namespace = ? LIMIT 1`).get(namespace) === undefined) continue;
    ctx.markRebuild(table);
    resumeTables.push(table);
    const del = sql(`DELETE FROM ${table} WHERE ${key} IN (SELECT ${key} FROM ${table} WHERE namespace = ? LIMIT ?)`);
    await inSlices(db, (limit) => del.run(namespace, limit).changes, { committed });
  }
  if (resumeTables.length > 0) touched = true;
  // SQLite may hand the highest erased seqs out again: new events there must count as not indexed.
  if (touched) ctx.resetFtsMark((sql('SELECT max(seq) FROM events').pluck().get() as number | null) ?? 0);
  return { events, touched, resumeTables };
}

/**
 * The end of a purge that erased rows: merges the FTS segments into one, a few pages per step
 * (each its own short write), then copies the WAL back and truncates it (`truncateWal`).
 */
export async function eraseLeftovers(o: {
  db: Database.Database;
  onDisk: boolean;
  checkpointer: Checkpointer | null;
  flush: () => void;
  hold: (step: Promise<void> | null) => void;
  progress: PurgeProgress;
}): Promise<void> {
  const mergeAll = ftsMergeStep(o.db, -MERGE_PAGES);
  o.flush(); // the deferred rows of other writes are in the index before the merge starts
  let merged = false;
  for (let steps = 0; steps < MAX_MERGE_STEPS; steps++) {
    o.progress.merges++;
    if (!mergeAll()) {
      merged = true;
      break;
    }
    await letOthersRun();
  }
  if (!merged) o.db.prepare("INSERT INTO events_fts (events_fts) VALUES ('optimize')").run();
  if (!o.onDisk) return;
  await truncateWal(o);
}

/**
 * Copies the WAL into the database and truncates it to 0 bytes. On the checkpointer's thread: PASSIVE
 * passes first (writes go on), then steps cutting the file's dead tail, then the TRUNCATE; the store
 * holds its writes during each step and the TRUNCATE (`hold` gets the promise writes wait for, never
 * rejected: the purge reports a failure; null when done). Inline on this connection when no
 * checkpointer runs.
 */
async function truncateWal(o: {
  db: Database.Database;
  checkpointer: Checkpointer | null;
  hold: (step: Promise<void> | null) => void;
  progress: PurgeProgress;
}): Promise<void> {
  const checkpointer = o.checkpointer;
  if (!checkpointer?.running) {
    const [r] = o.db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
    if (r?.busy !== 0) throw new Error('Cannot finish the purge as the WAL could not be truncated: retry it');
    return;
  }
  // Writes are held only while the TRUNCATE runs: it is short when every frame is already copied
  // back and synced (it then only waits for readers and cuts the file). So catch up until a pass saw
  // no commit of this connection meanwhile (total_changes counts them all, FTS rows too), then hold.
  const changes = o.db.prepare('SELECT total_changes()').pluck();
  for (let pass = 0; pass < MAX_CATCH_UPS; pass++) {
    const before = changes.get();
    await checkpointer.catchUp();
    if (changes.get() === before) break;
  }
  // The TRUNCATE also cuts the WAL file, as large as the WAL ever was since the store opened (160 MB
  // after a big purge: ~30 ms in ftruncate alone, all of it with writes held). So first cut its dead
  // tail, a step at a time, letting the held writes run between steps.
  for (let step = 0; step < MAX_SHRINK_STEPS; step++) {
    let shrunk: ShrinkStep;
    try {
      shrunk = await holdingWrites(o, checkpointer.shrink(SHRINK_BYTES));
    } catch (err) {
      checkpointer.lastError = (err as Error).message;
      break; // the TRUNCATE still erases it all, and reports a failed worker
    }
    if (shrunk.cut > 0) o.progress.walCuts++;
    if (shrunk.done) break;
    await letOthersRun();
  }
  await holdingWrites(o, checkpointer.truncate());
}

/** Awaits `work` with the store's writes held (`hold` gets a promise never rejected). */
async function holdingWrites<T>(o: { hold: (p: Promise<void> | null) => void }, work: Promise<T>): Promise<T> {
  o.hold(
    work.then(
      () => {},
      () => {},
    ),
  );
  try {
    return await work;
  } finally {
    o.hold(null);
  }
}
