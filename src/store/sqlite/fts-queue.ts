/**
 * @module
 * Deferred full-text indexing for the SQLite store. FTS5 writes a new index segment (plus its
 * structure record and merge work) for every transaction that touches it: with one group commit per
 * few remembers that was ~12 of the ~68 pages each commit wrote (measured from the WAL with
 * bench/lib/remember-profile.ts). So appended events queue their FTS rows here and are indexed in
 * one transaction per flush: after `delayMs`, when `maxRows` are waiting, and always before anything
 * reads the index (the store flushes first), so a search still sees every write made before it.
 *
 * Crash safety: a `meta` row `fts_seq` records the highest event `seq` indexed, written in the same
 * transaction as the rows. Events past it (queued when the process died) are indexed at open
 * (`SqliteStore` does that with `addAll` + `flush`).
 */
import type Database from 'better-sqlite3';

/**
 * Most rows a timed flush indexes in one transaction (about 1 ms of the event loop: 256 took 3-6 ms in
 * bench:fairness, longer than the small requests it delayed); the rest follow in the next turns. A
 * flush before a read indexes everything.
 */
const TIMED_FLUSH_ROWS = 64;

/** Options of `FtsQueue`. */
export interface FtsQueueOptions {
  /** Longest a queued row waits before a flush (ms). @default 50 */
  delayMs?: number;
  /** Queued rows that trigger a flush at once. @default 4096 */
  maxRows?: number;
}

/** An event as the indexer needs it. */
export interface FtsSource {
  seq: number;
  body: string;
}

/** Queue of FTS rows not indexed yet; one per store. */
export class FtsQueue {
  readonly #db: Database.Database;
  readonly #delayMs: number;
  readonly #maxRows: number;
  readonly #insert: Database.Statement;
  readonly #setMark: Database.Statement;
  readonly #flushTx: (rows: FtsSource[]) => void;
  #pending: FtsSource[] = [];
  #timer: NodeJS.Timeout | null = null;

  constructor(db: Database.Database, options: FtsQueueOptions = {}) {
    this.#db = db;
    this.#delayMs = options.delayMs ?? 50;
    this.#maxRows = options.maxRows ?? 4096;
    // No mark yet: a new database (no events), or one written before indexing was deferred, when
    // every stored event was indexed in its own transaction.
    db.prepare("INSERT OR IGNORE INTO meta (key, value) SELECT 'fts_seq', coalesce(max(seq), 0) FROM events").run();
    this.#insert = db.prepare('INSERT INTO events_fts (rowid, body) VALUES (?, ?)');
    this.#setMark = db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('fts_seq', ?)");
    this.#flushTx = db.transaction((rows: FtsSource[]) => {
      for (const r of rows) this.#insert.run(r.seq, r.body);
      this.#setMark.run((rows[rows.length - 1] as FtsSource).seq);
    });
  }

  /** The highest event seq already in the index (0 for none). */
  get mark(): number {
    const row = this.#db.prepare("SELECT value FROM meta WHERE key = 'fts_seq'").pluck().get() as number | undefined;
    return row ?? 0;
  }

  /** Rows queued and not indexed yet. */
  get pending(): number {
    return this.#pending.length;
  }

  /**
   * Queues the rows of a committed transaction, in seq order (never before commit: a rollback must index
   * nothing). Never throws: the caller's transaction has committed, so a failed flush must not report it failed.
   */
  addAll(rows: readonly FtsSource[]): void {
    for (const r of rows) this.#pending.push(r);
    if (this.#pending.length >= this.#maxRows) this.#flushQuietly();
    else if (this.#timer === null && this.#pending.length > 0) {
      this.#timer = setTimeout(() => this.#flushQuietly(), this.#delayMs);
      this.#timer.unref();
    }
  }

  // A timed flush has no caller to report to; a failure keeps the rows queued and the next flush
  // (a search, the next timer, close) throws it, or the next open re-indexes them.
  #flushQuietly(): void {
    try {
      this.flush(TIMED_FLUSH_ROWS);
      if (this.#pending.length > 0 && this.#timer === null && this.#db.open) {
        this.#timer = setTimeout(() => this.#flushQuietly(), 0);
        this.#timer.unref();
      }
    } catch {
      if (this.#timer === null && this.#db.open) {
        this.#timer = setTimeout(() => this.#flushQuietly(), this.#delayMs * 10);
        this.#timer.unref();
      }
    }
  }

  /**
   * Indexes the queued rows now (the first `maxRows` of them), in one transaction. No-op when the
   * queue is empty.
   */
  flush(maxRows = Number.POSITIVE_INFINITY): void {
    if (this.#timer !== null) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    if (this.#pending.length === 0 || !this.#db.open) return;
    const all = this.#pending;
    const rows = all.length > maxRows ? all.slice(0, maxRows) : all;
    this.#pending = all.length > maxRows ? all.slice(maxRows) : [];
    try {
      this.#flushTx(rows);
    } catch (err) {
      this.#pending = rows.concat(this.#pending); // kept for the next flush (or recovery at the next open)
      throw err;
    }
  }

  /**
   * Sets the mark to `seq` (after a purge deleted events: SQLite may hand their seqs out again, and
   * those new events must still count as not indexed). Flush first.
   */
  resetMark(seq: number): void {
    this.#setMark.run(seq);
  }
}
