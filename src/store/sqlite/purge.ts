/**
 * @module
 * The SQLite purge, built so no step holds the event loop for long (issue 9, item 5):
 * - a namespace with nothing stored is not touched at all (no VACUUM, no checkpoint);
 * - its rows are deleted in chunks of `CHUNK` per transaction, yielding to the event loop between
 *   chunks (a few ms each), with `secure_delete` zeroing the freed cells;
 * - the FTS `optimize`, the VACUUM and the TRUNCATE checkpoint, whose cost grows with the whole
 *   database, run on the checkpointer's worker thread and connection (`Checkpointer.vacuum`). Reads go
 *   on meanwhile from the WAL snapshot; the store holds its own writes until it ends (SQLite has one
 *   writer: a write there would wait in `busy_timeout` on the event loop).
 * Called by `SqliteStore.purgeNamespace`.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import type { Checkpointer } from './checkpointer.ts';

/** Rows deleted per transaction. */
export const CHUNK = 1000;

/** What the purge needs of the store. */
export interface PurgeContext {
  db: Database.Database;
  sql: (text: string) => Database.Statement;
  /** Flushes the deferred FTS rows, then sets the FTS mark to `seq`. */
  resetFtsMark: (seq: number) => void;
  /** Deletes the namespace's resume records (leases, working state…); returns how many rows. */
  purgeResume: (namespace: string) => number;
}

/**
 * Deletes every row of `namespace` in chunks.
 * @returns events erased, and whether any row at all (events, beliefs, resume records) was
 */
export async function deleteNamespaceRows(
  ctx: PurgeContext,
  namespace: string,
): Promise<{ events: number; touched: boolean }> {
  const { db, sql } = ctx;
  const pick = sql('SELECT seq FROM events WHERE namespace = ? LIMIT ?').pluck();
  const delFts = sql('DELETE FROM events_fts WHERE rowid = ?');
  const delEvent = sql('DELETE FROM events WHERE seq = ?');
  const delBeliefs = sql(
    `DELETE FROM beliefs WHERE (namespace, subject, predicate, observed_at, event_id) IN
       (SELECT namespace, subject, predicate, observed_at, event_id FROM beliefs WHERE namespace = ? LIMIT ?)`,
  );
  let events = 0;
  let touched = false;
  const eventChunk = db.transaction((seqs: number[]) => {
    for (const seq of seqs) {
      delFts.run(seq);
      delEvent.run(seq);
    }
  });
  for (;;) {
    const seqs = pick.all(namespace, CHUNK) as number[];
    if (seqs.length === 0) break;
    eventChunk(seqs);
    events += seqs.length;
    touched = true;
    await nextTurn();
  }
  while (delBeliefs.run(namespace, CHUNK).changes > 0) {
    touched = true;
    await nextTurn();
  }
  db.transaction(() => {
    if (ctx.purgeResume(namespace) > 0) touched = true;
    // SQLite may hand the highest erased seqs out again: new events there must count as not indexed.
    if (touched) ctx.resetFtsMark((sql('SELECT max(seq) FROM events').pluck().get() as number | null) ?? 0);
  })();
  return { events, touched };
}

/**
 * The end of a purge that erased rows. Merges FTS segments so no index page still holds the erased terms.
 * secure_delete zeroes freed cells, but a b-tree page that is rebuilt can keep old bytes in its unused
 * space, so VACUUM rewrites the whole file; then the WAL is folded back and truncated. Afterwards no file
 * under the data folder holds those bytes. That costs time proportional to the database, so it runs on the
 * checkpointer's thread while the store holds its writes (`hold` gets the promise writes wait for, never
 * rejected: the purge reports a failure; null when done), or inline when there is no running checkpointer.
 */
export async function vacuumAfterPurge(o: {
  db: Database.Database;
  onDisk: boolean;
  checkpointer: Checkpointer | null;
  flush: () => void;
  hold: (vacuum: Promise<void> | null) => void;
}): Promise<void> {
  if (!o.checkpointer?.running) return vacuumInline(o.db, o.onDisk);
  o.flush();
  const vacuum = o.checkpointer.vacuum();
  o.hold(vacuum.catch(() => {}));
  try {
    await vacuum;
  } finally {
    o.hold(null);
  }
}

/**
 * The inline end of a purge, for a store with no checkpointer worker (in memory, or it stopped):
 * merges FTS segments, VACUUMs and truncates the WAL on this thread.
 */
export function vacuumInline(db: Database.Database, onDisk: boolean): void {
  db.prepare("INSERT INTO events_fts (events_fts) VALUES ('optimize')").run();
  if (!onDisk) return;
  db.exec('VACUUM');
  const [r] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
  if (r?.busy !== 0) throw new Error('Cannot finish the purge as the WAL could not be truncated: retry it');
}
