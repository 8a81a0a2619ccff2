/**
 * @module
 * Opens the SQLite store's connection: `tether.db` in the data folder (folder 0700, files 0600) or in
 * memory, with the pragmas the store relies on. Called once by `sqlite-store.ts`; no tables here.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ensurePrivateDir, ensurePrivateFile, restrictIfExists } from '../../common/private-files.ts';

/**
 * The connection and its file path (`:memory:` for `dataDir` `:memory:`).
 * @param dataDir the data folder, created 0700 if missing
 */
export function openConnection(dataDir: string): { db: Database.Database; path: string } {
  let path = ':memory:';
  if (dataDir !== ':memory:') {
    ensurePrivateDir(dataDir);
    path = join(dataDir, 'tether.db');
    // SQLite creates the -wal and -shm files with the database file's mode: 0600 here makes them
    // 0600 too; ones left by an older version are narrowed as well.
    ensurePrivateFile(path);
    for (const suffix of ['-wal', '-shm']) restrictIfExists(path + suffix);
  }
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  // Freed pages are zeroed, so a purge leaves no bytes of erased facts in the file.
  db.pragma('secure_delete = ON');
  db.pragma('busy_timeout = 5000');
  // 16 MiB: the b-tree interior pages at 10^6 events (~7 MiB) and the hottest leaves. A larger cache
  // costs every commit that rebalanced a b-tree while the file is under 1 GiB: balance_nonroot swaps
  // page numbers through the lock-byte page (page 262145 at 4 KiB), and the pager's end-of-transaction
  // truncate of the page cache then walks the whole cache. At 64 MiB that walk took 9% of the writer's
  // CPU; 16 MiB gave about 20% more remembers/s over HTTP at 10^6 events (wrk, 8 connections).
  db.pragma('cache_size = -16384');
  // Checkpoints run on a worker thread (checkpointer.ts), so none inline; in memory there is no WAL.
  db.pragma('wal_autocheckpoint = 0');
  return { db, path };
}
