/**
 * @module
 * One step of cutting a WAL file's dead tail (`Checkpointer.shrink`), as plain JavaScript source: the
 * checkpointer's worker thread evaluates it (no TypeScript loader there), and the tests evaluate the
 * same text against connections of their own, stopping between its pass and its lock.
 *
 * The file keeps the size of the longest WAL since the store opened, while only the frames up to the
 * last commit (mxFrame, a PASSIVE checkpoint's `log`) are live: the rest are frames of before the WAL
 * started over. The cut is made holding SQLite's write lock (BEGIN IMMEDIATE), as SQLite itself cuts
 * the file (journal_size_limit), and only if no commit came between the pass that told mxFrame and the
 * lock (`PRAGMA data_version` changes with every other connection's commit, a restart included).
 *
 * - `walCutTarget(pass, size, frameBytes, chunk)`: the size to cut the file to, or null for none.
 * - `shrinkWal(db, o)`: one step on `db` (a connection with `busy_timeout` 0, outside a transaction);
 *   `o` = { walPath, chunk, fs (node:fs), between (optional: called after the pass, before the lock) };
 *   returns `{ cut, done }` (see `ShrinkStep` in checkpointer.ts).
 */
export const WAL_SHRINK_SOURCE = `
function walCutTarget(pass, size, frameBytes, chunk) {
  // A busy pass (another connection holds the checkpoint lock) reports log -1: mxFrame unknown.
  if (pass.busy !== 0 || !(pass.log >= 0)) return null;
  const live = 32 + pass.log * frameBytes;
  return size > live ? Math.max(live, size - chunk) : null;
}

function shrinkWal(db, o) {
  const version = db.prepare('PRAGMA data_version').pluck();
  const frameBytes = db.pragma('page_size', { simple: true }) + 24;
  const before = version.get();
  const [pass] = db.pragma('wal_checkpoint(PASSIVE)');
  if (o.between) o.between();
  db.exec('BEGIN IMMEDIATE');
  let wal = -1;
  try {
    if (version.get() !== before) return { cut: 0, done: false };
    wal = o.fs.openSync(o.walPath, 'r+');
    const size = o.fs.fstatSync(wal).size;
    const to = walCutTarget(pass, size, frameBytes, o.chunk);
    if (to !== null) {
      o.fs.ftruncateSync(wal, to);
      return { cut: size - to, done: false };
    }
    // Nothing dead, but every frame copied back: a write now starts the WAL over at its first frame,
    // and the file beyond becomes a dead tail. The write sets a header field to the value it has. If
    // a reader still reads the WAL, the frame is appended instead: done (the TRUNCATE waits for it).
    // (Nothing dead: the file is the live frames, so its size says whether they pass a chunk.)
    if (pass.busy === 0 && pass.log > 0 && pass.checkpointed === pass.log && size > o.chunk) {
      db.pragma('user_version = ' + Number(db.pragma('user_version', { simple: true })));
      db.exec('COMMIT');
      const [after] = db.pragma('wal_checkpoint(PASSIVE)');
      return { cut: 0, done: after.log > pass.log };
    }
    return { cut: 0, done: true };
  } finally {
    try {
      if (db.inTransaction) db.exec('ROLLBACK');
    } finally {
      if (wal >= 0) o.fs.closeSync(wal);
    }
  }
}
`;
