/**
 * @module
 * Runs the SQLite store's purges (`SqliteStore.purgeNamespace`), one at a time, through the steps of
 * `purge.ts` and `table-rebuild.ts`, and holds the store's writes only while each of the last steps (the cuts of the
 * WAL file, its TRUNCATE checkpoint) runs: `SqliteStore` awaits `held` before each write. Holds no SQL of its own.
 */
import type Database from 'better-sqlite3';
import type { Checkpointer } from './checkpointer.ts';
import type { FtsQueue } from './fts-queue.ts';
import { deleteNamespaceRows, eraseLeftovers, type PurgeProgress } from './purge.ts';
import { markRebuild, rebuildTable } from './table-rebuild.ts';

/** What a purge needs of the store. */
export interface PurgeRunnerOptions {
  db: Database.Database;
  /** The store's cached prepared statements. */
  sql: (text: string) => Database.Statement;
  fts: FtsQueue;
  /** null in memory (no WAL), or when no checkpointer was started. */
  checkpointer: Checkpointer | null;
  onDisk: boolean;
}

/** The purges of one store. */
export class PurgeRunner {
  readonly #o: PurgeRunnerOptions;
  /** The purge under way (purges run one after another: a table rebuild is not shared). */
  #chain: Promise<unknown> = Promise.resolve();
  /** Set while a purge's WAL cut or TRUNCATE checkpoint runs on the checkpointer's thread: every write awaits it first. */
  #held: Promise<void> | null = null;
  /**
   * Purges that erased rows (an empty namespace's purge touches nothing), and the steps of purges so
   * far: delete and table copy transactions, FTS merge steps, resume tables rebuilt.
   */
  readonly stats: PurgeProgress & { erasures: number } = {
    erasures: 0,
    deletes: 0,
    copies: 0,
    merges: 0,
    rebuilds: 0,
    walCuts: 0,
  };

  constructor(options: PurgeRunnerOptions) {
    this.#o = options;
  }

  /** The hold writes must wait out before they start (null when none), and wait again if it is set. */
  get held(): Promise<void> | null {
    return this.#held;
  }

  /** The last failure of a rebuild started by `rebuild` (a purge's own failures reject its call). */
  lastError: string | null = null;

  /** Rebuilds `tables` after the purges queued before (at open: the rebuilds a stopped process left). */
  rebuild(tables: string[]): void {
    if (tables.length === 0) return;
    this.#chain = this.#chain
      .then(async () => {
        for (const table of tables) await rebuildTable(this.#o.db, table, { progress: this.stats });
      })
      .catch((err: Error) => {
        this.lastError = err.message;
      });
  }

  /** Erases `namespace` for good; resolves to the events erased. */
  purge(namespace: string): Promise<number> {
    const run = this.#chain.then(() => this.#purge(namespace));
    this.#chain = run.catch(() => {});
    return run;
  }

  async #purge(namespace: string): Promise<number> {
    const { db, fts, checkpointer } = this.#o;
    while (this.#held) await this.#held;
    // The TRUNCATE checkpoint at the end needs the checkpoint lock: no background checkpoint meanwhile.
    const resume = await checkpointer?.pause();
    try {
      fts.flush();
      const ctx = {
        db,
        sql: this.#o.sql,
        resetFtsMark: (seq: number) => {
          fts.flush();
          fts.resetMark(seq);
        },
        markRebuild: (table: string) => markRebuild(db, table),
      };
      const { events, touched, resumeTables } = await deleteNamespaceRows(ctx, namespace, this.stats);
      // Nothing erased, nothing to rewrite: an empty namespace's purge costs a few index lookups.
      if (!touched) return 0;
      this.stats.erasures++;
      for (const table of resumeTables) await rebuildTable(db, table, { progress: this.stats });
      await eraseLeftovers({
        db,
        onDisk: this.#o.onDisk,
        checkpointer,
        flush: () => fts.flush(),
        hold: (step) => {
          this.#held = step;
        },
        progress: this.stats,
      });
      return events;
    } finally {
      resume?.();
    }
  }
}
