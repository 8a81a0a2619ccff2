/**
 * @module
 * Deferred full-text indexing for the SQLite store. FTS5 writes a new index segment (plus its
 * structure record and merge work) for every transaction that touches it: with one group commit per
 * few remembers that was ~12 of the ~68 pages each commit wrote (measured from the WAL with
 * bench/lib/remember-profile.ts). So appended events queue their FTS rows here and are indexed
 * later: in the background after `delayMs` (at once when `maxRows` are waiting), and all at once
 * before anything reads the index (the store flushes first), so a search still sees every write
 * made before it.
 *
 * The background indexing is heavy work done in steps, each its own short transaction, light
 * requests first between two (`letOthersRun`), outside any request's context:
 * - flushes of the rows that fit `SLICE_MS` at the cost of the last ones (`ChunkSizer`, 16 to 256): an import's
 *   thousands of rows otherwise went in back-to-back flushes that no small request could pass;
 * - merges of `MERGE_PAGES` pages of the levels that hold `usermerge` (4) segments or more. FTS5's
 *   automerge does a quantum of merge work (64 leaf pages per level) inside whichever transaction
 *   wrote the 64th new leaf page since the last: a flush, or a purge's delete slice, then held the
 *   event loop 15-40 ms (bench:fairness, a probe timing each transaction). So automerge is off, and
 *   these steps merge the same segments it would have, in slices, and as much as the writes earn
 *   (one step per flush, one more per 64 rows flushed, `#mergeCredit`): like automerge, a big merge
 *   (a bulk load's) goes on as writes come instead of all at once after them, which kept a read
 *   worker and the loop busy for minutes after bench:memory's load. FTS5's crisis merge (16 segments
 *   on one level) still bounds the index if the steps ever fall behind.
 *
 * Crash safety: a `meta` row `fts_seq` records the highest event `seq` indexed, written in the same
 * transaction as the rows. Events past it (queued when the process died) are indexed at open
 * (`SqliteStore` does that with `addAll` + `flush`).
 */
import { performance } from 'node:perf_hooks';
import type Database from 'better-sqlite3';
import { ChunkSizer } from '../../common/chunk-sizer.ts';
import { letOthersRun, SLICE_MS } from '../../common/time-slice.ts';

/**
 * Most rows a background flush indexes in one transaction (256 took 3-6 ms in bench:fairness, longer
 * than the small requests it delayed); the cost of the last ones usually sizes it smaller. A flush
 * before a read indexes everything.
 */
const STEP_ROWS = 256;

/**
 * Rows of the first background flush, before any was timed; and the rows queued during a run that are
 * flushed in it (fewer wait for the next run, in one segment).
 */
const FIRST_STEP_ROWS = 64;

/** Fewest rows of a background flush (a fixed cost per commit must not shrink it to one row a segment). */
const MIN_STEP_ROWS = 16;

/** FTS pages one background merge step writes. */
export const MERGE_PAGES = 16;

/** Most steps one run of background indexing takes; the next write starts another (a bound on a loop). */
const MAX_STEPS = 100_000;

/** Rows flushed that earn one more merge step (besides the one every flush earns). */
const ROWS_PER_MERGE_STEP = 64;

/** Most merge steps earned and not yet run. */
const MAX_MERGE_CREDIT = 256;

/**
 * One FTS5 merge step on `db`'s `events_fts`, of `pages` pages: positive, the levels that hold
 * `usermerge` segments or more (what automerge merges); negative, every level, toward one segment.
 * The step returned says whether it merged anything (FTS5: a step that found nothing to merge changes
 * fewer than 2 rows). Used by the queue's background steps and a purge's final merge.
 */
export function ftsMergeStep(db: Database.Database, pages: number): () => boolean {
  const merge = db.prepare(`INSERT INTO events_fts (events_fts, rank) VALUES ('merge', ${pages})`);
  const changes = db.prepare('SELECT total_changes()').pluck();
  return () => {
    const before = changes.get() as number;
    merge.run();
    return (changes.get() as number) - before >= 2;
  };
}

/** Options of `FtsQueue`. */
export interface FtsQueueOptions {
  /** Longest a queued row waits before a flush (ms). @default 50 */
  delayMs?: number;
  /** Queued rows that trigger a flush at once. @default 4096 */
  maxRows?: number;
  /** While it gives a promise, writes must wait for it (a purge's WAL truncate): merging waits too. */
  held?: () => Promise<void> | null;
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
  readonly #held: () => Promise<void> | null;
  readonly #mergeStep: () => boolean;
  readonly #sizer = new ChunkSizer({ max: STEP_ROWS, budgetMs: SLICE_MS, first: FIRST_STEP_ROWS, min: MIN_STEP_ROWS });
  #pending: FtsSource[] = [];
  #timer: NodeJS.Timeout | null = null;
  /** A run of background steps is under way (`#inSteps`). */
  #working: Promise<void> | null = null;
  /** Merge steps flushes earned and not run yet (`ROWS_PER_MERGE_STEP`); 0 once a step found nothing to merge. */
  #mergeCredit = 0;
  /** Background flushes run (tests follow indexing by them). */
  steps = 0;
  /** Merge steps run. */
  merges = 0;

  constructor(db: Database.Database, options: FtsQueueOptions = {}) {
    this.#db = db;
    this.#delayMs = options.delayMs ?? 50;
    this.#maxRows = options.maxRows ?? 4096;
    this.#held = options.held ?? (() => null);
    // Stored in the index's config: every connection's writes leave merging to the background steps.
    db.prepare("INSERT INTO events_fts (events_fts, rank) VALUES ('automerge', 0)").run();
    this.#mergeStep = ftsMergeStep(db, MERGE_PAGES);
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
    if (this.#pending.length === 0 || this.#working) return;
    if (this.#pending.length >= this.#maxRows) this.#later(0);
    else this.#later(this.#delayMs);
  }

  /** Starts the background steps after `ms` (unless a timer already will). */
  #later(ms: number): void {
    if (this.#timer !== null) {
      if (ms > 0) return;
      clearTimeout(this.#timer);
    }
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#inStepsSoon();
    }, ms);
    this.#timer.unref();
  }

  /**
   * Indexes the queued rows now (the first `maxRows` of them), in one transaction. No-op when the
   * queue is empty. Merging follows in the background.
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
    const earned = 1 + Math.floor(rows.length / ROWS_PER_MERGE_STEP);
    this.#mergeCredit = Math.min(MAX_MERGE_CREDIT, this.#mergeCredit + earned);
    this.#inStepsSoon();
  }

  /** Resolves once the background steps under way (if any) are done. */
  settled(): Promise<void> {
    return this.#working ?? Promise.resolve();
  }

  /** Starts the background steps unless a run is under way (it goes on until nothing is left to do). */
  #inStepsSoon(): void {
    if (this.#working) return;
    // Started from a request's write or read, yet no request's work: its steps name no owner.
    this.#working = this.#inSteps().finally(() => {
      this.#working = null;
      // Rows queued after the last step looked (addAll leaves them to a run under way).
      if (this.#pending.length > 0 && this.#timer === null && this.#db.open) this.#later(this.#delayMs);
    });
  }

  /**
   * Background steps, one per turn: the merge steps the flushes earned, then a flush of the rows
   * queued when the run started (or of `FIRST_STEP_ROWS` or `maxRows` queued since), and so on: merging
   * never waits for a steady stream of writes to stop, and it does as much as they earned before the
   * next flush. The rows of a few remembers queued during a run wait for the next one (`delayMs`), to go
   * in one segment rather than one each. Ends when no flush is due and no merge is left or earned.
   */
  async #inSteps(): Promise<void> {
    let due = this.#pending.length;
    let mergeLeft = true;
    for (let i = 0; i < MAX_STEPS; i++) {
      await letOthersRun();
      for (let h = this.#held(); h; h = this.#held()) await h.catch(() => {});
      if (!this.#db.open) return;
      due = Math.min(due, this.#pending.length); // a read's flush may have indexed them meanwhile
      const soon = Math.min(FIRST_STEP_ROWS, this.#maxRows);
      const flushWanted = this.#pending.length > 0 && (due > 0 || this.#pending.length >= soon);
      const mergeWanted = mergeLeft && this.#mergeCredit > 0;
      if (!flushWanted && !mergeWanted) return;
      if (mergeWanted) {
        this.#mergeCredit--;
        try {
          mergeLeft = this.#mergeStep();
        } catch {
          mergeLeft = false; // nothing is lost: the segments stay, and the next run merges again
          continue;
        }
        this.merges++;
        if (!mergeLeft) this.#mergeCredit = 0; // nothing to merge: no debt kept for later segments
        continue;
      }
      const rows = Math.min(this.#sizer.size, this.#pending.length);
      const started = performance.now();
      try {
        this.flush(rows);
      } catch {
        // The rows stay queued; the next flush (a search, a later run, close) throws it, or the
        // next open re-indexes them.
        this.#later(this.#delayMs * 10);
        return;
      }
      this.#sizer.took(rows, performance.now() - started);
      this.steps++;
      due -= rows;
      mergeLeft = true;
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
