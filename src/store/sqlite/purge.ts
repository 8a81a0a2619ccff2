/**
 * @module
 * The SQLite purge, in steps that each hold the writer a few ms, so other tenants' writes go on
 * between them (issue 21) and no file under the data folder keeps a byte of the namespace after it:
 * - a namespace with nothing stored is not touched at all;
 * - its rows are deleted in transactions of at most `SLICE_MS` of work, yielding to the event loop
 *   between them; `secure_delete` zeroes every freed cell and page, and FTS5's `secure-delete` option
 *   takes the erased rows' entries out of the index segments;
 * - what FTS5 keeps even so (a term that was the first of a segment's leaf page stays there) goes with
 *   an incremental merge of every segment into one (`'merge', -N`: N pages per step, a step per
 *   turn), which rewrites each segment that existed when the rows were deleted;
 * - the WAL, whose older frames still hold the pages as they were, is copied back by a PASSIVE
 *   checkpoint on the checkpointer's thread (writes go on), then truncated by a TRUNCATE checkpoint
 *   there, during which the store holds its writes: only the frames written meanwhile are left to copy.
 * No VACUUM for events and beliefs: its cost grows with the whole database, and it held every write
 * for all of it. Still a VACUUM (on the checkpointer's thread, writes held) when resume records were
 * erased: deleted in one go, their tables' rebuilt pages keep stale bytes (resume-disk.test.ts finds them).
 * Called by `SqliteStore.purgeNamespace`.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { TimeSlice } from '../../common/time-slice.ts';
import type { Checkpointer } from './checkpointer.ts';

/** Longest one purge transaction runs before other writes get a turn, in ms. */
export const SLICE_MS = 4;

/** Rows picked per statement inside a transaction (the slice's time decides how many statements). */
const PICK = 32;

/** FTS pages one merge step writes. */
const MERGE_PAGES = 16;

/** Most merge steps before a purge finishes the merge in one go (other writes kept adding segments). */
const MAX_MERGE_STEPS = 100_000;

/** What the purge needs of the store. */
export interface PurgeContext {
  db: Database.Database;
  sql: (text: string) => Database.Statement;
  /** Flushes the deferred FTS rows, then sets the FTS mark to `seq`. */
  resetFtsMark: (seq: number) => void;
  /** Deletes the namespace's resume records (leases, working state…); returns how many rows. */
  purgeResume: (namespace: string) => number;
}

/** Purge steps run so far (tests follow a purge by them). */
export interface PurgeProgress {
  /** Delete transactions committed. */
  deletes: number;
  /** FTS merge steps run. */
  merges: number;
}

/**
 * Runs `step` (which deletes at most `PICK` rows and says how many) again and again in one
 * transaction until nothing is left or `SLICE_MS` passed; then lets the event loop turn; until done.
 * @returns rows deleted
 */
async function inSlices(db: Database.Database, step: () => number, progress: PurgeProgress): Promise<number> {
  let total = 0;
  const slice = db.transaction(() => {
    const time = new TimeSlice(SLICE_MS);
    let n = 0;
    for (let got = PICK; got === PICK && !time.due(); ) {
      got = step();
      n += got;
    }
    return n;
  });
  for (;;) {
    const n = slice() as number;
    total += n;
    if (n === 0) return total;
    progress.deletes++;
    await nextTurn();
  }
}

/**
 * Deletes every row of `namespace`, a slice of work per transaction.
 * @returns events erased, and whether any row at all (events, beliefs, resume records) was
 */
export async function deleteNamespaceRows(
  ctx: PurgeContext,
  namespace: string,
  progress: PurgeProgress = { deletes: 0, merges: 0 },
): Promise<{ events: number; touched: boolean; resume: boolean }> {
  const { db, sql } = ctx;
  const pick = sql('SELECT seq FROM events WHERE namespace = ? LIMIT ?').pluck();
  const delFts = sql('DELETE FROM events_fts WHERE rowid = ?');
  const delEvent = sql('DELETE FROM events WHERE seq = ?');
  const delBeliefs = sql(
    `DELETE FROM beliefs WHERE (namespace, subject, predicate, observed_at, event_id) IN
       (SELECT namespace, subject, predicate, observed_at, event_id FROM beliefs WHERE namespace = ? LIMIT ?)`,
  );
  const events = await inSlices(
    db,
    () => {
      const seqs = pick.all(namespace, PICK) as number[];
      for (const seq of seqs) {
        delFts.run(seq);
        delEvent.run(seq);
      }
      return seqs.length;
    },
    progress,
  );
  let touched = events > 0;
  let resume = false;
  if ((await inSlices(db, () => delBeliefs.run(namespace, PICK).changes, progress)) > 0) touched = true;
  db.transaction(() => {
    if (ctx.purgeResume(namespace) > 0) {
      touched = true;
      resume = true;
    }
    // SQLite may hand the highest erased seqs out again: new events there must count as not indexed.
    if (touched) ctx.resetFtsMark((sql('SELECT max(seq) FROM events').pluck().get() as number | null) ?? 0);
  })();
  return { events, touched, resume };
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
  hold: (truncate: Promise<void> | null) => void;
  progress: PurgeProgress;
  /** Resume records were erased: their tables' pages may keep stale bytes, so VACUUM (see below). */
  vacuum: boolean;
}): Promise<void> {
  const merge = o.db.prepare(`INSERT INTO events_fts (events_fts, rank) VALUES ('merge', ${-MERGE_PAGES})`);
  const changes = o.db.prepare('SELECT total_changes()').pluck();
  o.flush(); // the deferred rows of other writes are in the index before the merge starts
  let merged = false;
  for (let steps = 0; steps < MAX_MERGE_STEPS; steps++) {
    const before = changes.get() as number;
    merge.run();
    o.progress.merges++;
    // FTS5: a merge step that found nothing to merge changes fewer than 2 rows.
    if ((changes.get() as number) - before < 2) {
      merged = true;
      break;
    }
    await nextTurn();
  }
  if (!merged) o.db.prepare("INSERT INTO events_fts (events_fts) VALUES ('optimize')").run();
  if (!o.onDisk) return;
  await truncateWal(o);
}

/**
 * Copies the WAL into the database and truncates it to 0 bytes. On the checkpointer's thread: a
 * PASSIVE pass first (writes go on), then the TRUNCATE, during which the store holds its writes
 * (`hold` gets the promise writes wait for, never rejected: the purge reports a failure; null when
 * done). Inline on this connection when no checkpointer runs.
 */
async function truncateWal(o: {
  db: Database.Database;
  checkpointer: Checkpointer | null;
  hold: (truncate: Promise<void> | null) => void;
  vacuum: boolean;
}): Promise<void> {
  const checkpointer = o.checkpointer;
  if (!checkpointer?.running) {
    if (o.vacuum) o.db.exec('VACUUM');
    const [r] = o.db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
    if (r?.busy !== 0) throw new Error('Cannot finish the purge as the WAL could not be truncated: retry it');
    return;
  }
  await checkpointer.catchUp();
  const truncate = checkpointer.truncate(o.vacuum);
  o.hold(truncate.catch(() => {}));
  try {
    await truncate;
  } finally {
    o.hold(null);
  }
}
