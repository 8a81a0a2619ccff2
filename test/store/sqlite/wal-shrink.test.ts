/**
 * One step of cutting a WAL file's dead tail (src/store/sqlite/wal-shrink.ts), the very source the
 * checkpointer's worker runs, evaluated here on connections of the test's own: where the cut goes for
 * every pass a PASSIVE checkpoint can report (a busy one included), and that a commit landing between
 * the pass and the write lock stops the step, where a cut to the pass's end would lose its frames.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { WAL_SHRINK_SOURCE } from '../../../src/store/sqlite/wal-shrink.ts';

interface Pass {
  busy: number;
  log: number;
  checkpointed: number;
}
type ShrinkWal = (
  db: Database.Database,
  o: { walPath: string; chunk: number; fs: typeof fs; between?: () => void },
) => { cut: number; done: boolean };

const { walCutTarget, shrinkWal } = new Function(`${WAL_SHRINK_SOURCE}\nreturn { walCutTarget, shrinkWal };`)() as {
  walCutTarget: (pass: Pass, size: number, frameBytes: number, chunk: number) => number | null;
  shrinkWal: ShrinkWal;
};

const tempRoot = fs.mkdtempSync(join(tmpdir(), 'tether-wal-shrink-'));
after(() => fs.rmSync(tempRoot, { recursive: true, force: true }));

const FRAME = 4096 + 24;

describe('walCutTarget', () => {
  it('cuts the dead tail a chunk at a time, down to the end of the last live frame and no further', () => {
    const live = 32 + 10 * FRAME;
    const pass = { busy: 0, log: 10, checkpointed: 10 };
    assert.equal(walCutTarget(pass, live + 5 * 2 ** 20, FRAME, 2 ** 20), live + 4 * 2 ** 20);
    assert.equal(walCutTarget(pass, live + 1000, FRAME, 2 ** 20), live);
    assert.equal(walCutTarget(pass, live, FRAME, 2 ** 20), null);
    assert.equal(walCutTarget({ busy: 0, log: 0, checkpointed: 0 }, 3 * FRAME, FRAME, 2 ** 30), 32);
  });

  it('cuts nothing after a busy pass, which does not know where the live frames end', () => {
    // SQLite answers a PASSIVE checkpoint that could not take the checkpoint lock with log -1.
    assert.equal(walCutTarget({ busy: 1, log: -1, checkpointed: -1 }, 100 * FRAME, FRAME, 2 ** 20), null);
    assert.equal(walCutTarget({ busy: 1, log: 10, checkpointed: 5 }, 100 * FRAME, FRAME, 2 ** 20), null);
  });
});

describe('shrinkWal', () => {
  it('cuts nothing when a commit lands between its pass and its lock, and loses none of its frames', () => {
    const path = join(tempRoot, 'race.db');
    const writer = new Database(path);
    writer.pragma('journal_mode = WAL');
    writer.pragma('wal_autocheckpoint = 0');
    writer.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
    const insert = writer.prepare('INSERT INTO t (body) VALUES (?)');
    const rows = (from: number, to: number) =>
      writer.transaction(() => {
        for (let i = from; i < to; i++) insert.run(`${i}:`.padEnd(4000, 'x'));
      })();
    const checkpointer = new Database(path);
    checkpointer.pragma('busy_timeout = 0');
    const reader = new Database(path, { readonly: true });
    try {
      rows(0, 1000);
      checkpointer.pragma('wal_checkpoint(PASSIVE)'); // every frame copied back
      rows(1000, 1010); // the WAL starts over: these frames at its start, a dead tail behind them
      // A reader's snapshot keeps later frames from being copied back: only the WAL has them.
      reader.exec('BEGIN');
      reader.prepare('SELECT count(*) FROM t').pluck().get();
      const o = { walPath: `${path}-wal`, chunk: 2 ** 30, fs };
      // With a chunk this big the cut goes to the end of the frames the pass saw, so the frames of a
      // commit after the pass would be cut if the step went on.
      const step = shrinkWal(checkpointer, { ...o, between: () => rows(1010, 1030) });
      assert.deepEqual(step, { cut: 0, done: false });
      const next = shrinkWal(checkpointer, o);
      assert.ok(next.cut > 0, 'the next step cuts the dead tail');
      const fresh = new Database(path, { readonly: true });
      try {
        assert.equal(fresh.prepare('SELECT count(*) FROM t').pluck().get(), 1030);
        assert.equal(fresh.pragma('integrity_check', { simple: true }), 'ok');
      } finally {
        fresh.close();
      }
    } finally {
      if (reader.inTransaction) reader.exec('COMMIT');
      reader.close();
      checkpointer.close();
      writer.close();
    }
  });
});
