/**
 * Background WAL checkpoints (src/store/sqlite/checkpointer.ts) against a real SQLite file: under
 * steady writes the WAL stays short (without it, it grows with every commit), and `pause` keeps the
 * checkpoint lock free for a TRUNCATE checkpoint of the writer's own.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { Checkpointer, startCheckpointer } from '../../../src/store/sqlite/checkpointer.ts';
import { waitFor } from '../../gateway/helpers/harness.ts';

const tempRoot = mkdtempSync(join(tmpdir(), 'tether-checkpointer-'));
after(() => rmSync(tempRoot, { recursive: true, force: true }));

/** A WAL database with automatic checkpoints off, as the store opens it. */
function openDb(name: string): { db: Database.Database; path: string } {
  const path = join(tempRoot, name);
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('wal_autocheckpoint = 0');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  return { db, path };
}

/**
 * Commits `commits` transactions of 4 KiB rows, yielding to the event loop between them; returns the largest
 * WAL seen. With `cp`, every 100th commit also waits (at most 200 ms) for the checkpointer's next pass: on an
 * idle machine passes come far more often anyway; on one whose cores are busy with other tests the
 * worker thread can be starved for long, which would measure the machine rather than the checkpointer.
 */
async function writeSteadily(
  db: Database.Database,
  path: string,
  commits: number,
  onCommit?: () => void,
  cp?: Checkpointer,
): Promise<number> {
  const insert = db.prepare('INSERT INTO t (body) VALUES (?)');
  const body = 'x'.repeat(4096);
  let largest = 0;
  for (let i = 0; i < commits; i++) {
    db.transaction(() => {
      for (let j = 0; j < 4; j++) insert.run(body);
    })();
    onCommit?.();
    largest = Math.max(largest, statSync(`${path}-wal`).size);
    if (i % 100 === 99 && cp) {
      const passes = cp.stats.passes;
      for (let w = 0; cp.stats.passes === passes && w < 100; w++) await new Promise((r) => setTimeout(r, 2));
    } else if (i % 10 === 0) await new Promise((r) => setTimeout(r, 2));
    else await tick();
  }
  return largest;
}

describe('Checkpointer', () => {
  it('keeps the WAL short under steady writes, which without it grows with every commit', async () => {
    const plain = openDb('plain.db');
    const unchecked = await writeSteadily(plain.db, plain.path, 600);
    plain.db.close();

    const { db, path } = openDb('checked.db');
    let longWal = 0;
    const cp = new Checkpointer({
      path,
      intervalMs: 10,
      maxWalPages: 200,
      onLongWal: () => {
        longWal++;
        db.pragma('wal_checkpoint(PASSIVE)');
      },
    });
    try {
      const checked = await writeSteadily(db, path, 600, () => cp.noteWrite(), cp);
      assert.ok(longWal > 0, 'the WAL passed maxWalPages and the writer caught up');
      // Bounded by the catch-up at 4x maxWalPages, plus what commits while a pass is late: a loaded
      // machine (other tests on both cores) has seen 1/3 of the unchecked WAL; without it, the two are equal.
      assert.ok(
        checked < unchecked / 2,
        `WAL peaked at ${checked} bytes with the checkpointer vs ${unchecked} without`,
      );
      assert.equal(cp.lastError, null);
      assert.equal(db.prepare('SELECT count(*) FROM t').pluck().get(), 2400);
    } finally {
      await cp.close();
      db.close();
    }
  });

  it('syncs the database file after each pass that copied pages, and only then', async () => {
    // SQLite syncs it only after a pass that reached the end of the WAL; under steady writes none does,
    // and the writer's catch-up then had to write back everything the passes had copied.
    const { db, path } = openDb('synced.db');
    const cp = new Checkpointer({ path, intervalMs: 5, onLongWal: () => {} });
    const settle = async () => {
      await waitFor('a checkpoint pass', () => cp.stats.passes > 0, { intervalMs: 5 });
      await new Promise((r) => setTimeout(r, 30)); // a tick without writes sends no pass
    };
    try {
      await writeSteadily(db, path, 30, () => cp.noteWrite());
      await settle();
      const afterWrites = { ...cp.stats };
      assert.ok(afterWrites.syncs > 0, `no sync in ${afterWrites.passes} passes`);
      assert.ok(afterWrites.syncs <= afterWrites.passes);
      // A pass with nothing new to copy does not sync.
      cp.noteWrite();
      await waitFor('a pass after the write', () => cp.stats.passes > afterWrites.passes, { intervalMs: 5 });
      assert.equal(cp.stats.passes, afterWrites.passes + 1);
      assert.equal(cp.stats.syncs, afterWrites.syncs);
      assert.equal(cp.lastError, null);
    } finally {
      await cp.close();
      db.close();
    }
  });

  it('catches up past 4x maxWalPages even when no pass ever leaves a short tail', async () => {
    const { db, path } = openDb('outpaced.db');
    let longWal = 0;
    // tailPages -1: no pass counts as short, as with a writer that outpaces every pass.
    const cp = new Checkpointer({
      path,
      intervalMs: 10,
      maxWalPages: 50,
      tailPages: -1,
      onLongWal: () => {
        longWal++;
        db.pragma('wal_checkpoint(PASSIVE)');
      },
    });
    try {
      const peak = await writeSteadily(db, path, 600, () => cp.noteWrite(), cp);
      assert.ok(longWal > 0, 'the hard limit called onLongWal');
      // Unchecked, 600 commits of 4 rows grow the WAL to ~16 MB (first test); the catch-ups restart it.
      assert.ok(peak < 8_000_000, `WAL peaked at ${peak} bytes`);
    } finally {
      await cp.close();
      db.close();
    }
  });

  it('pause() waits for a running checkpoint and holds new ones, so a TRUNCATE checkpoint is not busy', async () => {
    const { db, path } = openDb('pause.db');
    const cp = new Checkpointer({ path, intervalMs: 1, onLongWal: () => {} });
    try {
      await writeSteadily(db, path, 50, () => cp.noteWrite());
      const resume = await cp.pause();
      cp.noteWrite();
      await new Promise((r) => setTimeout(r, 20)); // ticks pass while paused
      const [r] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
      assert.equal(r?.busy, 0);
      assert.equal(statSync(`${path}-wal`).size, 0);
      resume();
    } finally {
      await cp.close();
      db.close();
    }
  });

  describe('shrink()', () => {
    const CHUNK = 1 << 20;
    const row = (i: number) => `${i}:`.padEnd(4000, 'x');

    /**
     * A WAL of ~12 MB whose every frame the checkpointer copied back (`user_version` 7); the caller
     * holds the pause. `beforeCopy` runs just before the copy.
     */
    async function copiedBackWal(name: string, beforeCopy?: (path: string) => void) {
      const { db, path } = openDb(name);
      const cp = new Checkpointer({ path, intervalMs: 60_000, onLongWal: () => {} });
      const insert = db.prepare('INSERT INTO t (body) VALUES (?)');
      db.transaction(() => {
        for (let i = 0; i < 3000; i++) insert.run(row(i));
      })();
      db.pragma('user_version = 7');
      beforeCopy?.(path);
      const resume = await cp.pause();
      await cp.catchUp();
      const wal = () => statSync(`${path}-wal`).size;
      return { db, path, cp, insert, resume, wal };
    }

    /** Every row through a connection of its own, and SQLite's check of the whole file. */
    function reopened(path: string): { rows: number; check: string } {
      const other = new Database(path, { readonly: true });
      try {
        const rows = other.prepare('SELECT count(*) FROM t').pluck().get() as number;
        const check = other.pragma('integrity_check', { simple: true }) as string;
        return { rows, check };
      } finally {
        other.close();
      }
    }

    it('cuts the dead tail of the WAL file, at most a chunk a step, and never a frame written since it started over', async () => {
      const { db, path, cp, insert, resume, wal } = await copiedBackWal('shrink.db');
      let reader: Database.Database | null = null;
      try {
        // Every frame was copied back: this commit starts the WAL over at its first frame.
        db.transaction(() => {
          for (let i = 3000; i < 3010; i++) insert.run(row(i));
        })();
        // A reader's snapshot keeps the frames committed after it from being copied back: the
        // database file lacks them, so a cut into them would lose rows.
        reader = new Database(path, { readonly: true });
        reader.exec('BEGIN');
        reader.prepare('SELECT count(*) FROM t').pluck().get();
        db.transaction(() => {
          for (let i = 3010; i < 3030; i++) insert.run(row(i));
        })();
        const start = wal();
        assert.ok(start > 8 * CHUNK, `WAL file of ${start} bytes`);
        let size = start;
        let steps = 0;
        let rows = 3030;
        for (; steps < 100; steps++) {
          const step = await cp.shrink(CHUNK);
          assert.ok(step.cut <= CHUNK, `cut ${step.cut} bytes`);
          assert.equal(wal(), size - step.cut);
          size -= step.cut;
          if (step.done) break;
          // The store's writes run between steps (it holds them only during one).
          if (steps % 3 === 0) insert.run(row(rows++));
        }
        assert.ok(steps >= 8, `${steps} steps`);
        assert.ok(size < CHUNK, `${size} bytes left`);
        resume();
        assert.deepEqual(reopened(path), { rows, check: 'ok' });
        reader.exec('COMMIT');
        insert.run(row(rows++));
        assert.deepEqual(reopened(path), { rows, check: 'ok' });
      } finally {
        if (reader?.inTransaction) reader.exec('COMMIT');
        reader?.close();
        resume();
        await cp.close();
        db.close();
      }
    });

    it('starts over a WAL no write started over yet, with no change to the data, then cuts it', async () => {
      const { db, path, cp, resume, wal } = await copiedBackWal('shrink-restart.db');
      try {
        const first = await cp.shrink(CHUNK);
        assert.deepEqual(first, { cut: 0, done: false });
        let size = wal();
        for (let steps = 0; steps < 100; steps++) {
          const step = await cp.shrink(CHUNK);
          size -= step.cut;
          if (step.done) break;
        }
        assert.ok(size < CHUNK, `${size} bytes left`);
        assert.equal(db.pragma('user_version', { simple: true }), 7);
        resume();
        assert.deepEqual(reopened(path), { rows: 3000, check: 'ok' });
      } finally {
        resume();
        await cp.close();
        db.close();
      }
    });

    it('settles every call when close() comes while shrink steps are under way', { timeout: 60_000 }, async () => {
      const { db, cp, insert, resume } = await copiedBackWal('shrink-close.db');
      try {
        insert.run(row(3000)); // the WAL starts over: a dead tail to cut
        const steps = [cp.shrink(CHUNK), cp.shrink(CHUNK)];
        const closed = cp.close();
        const late = cp.shrink(CHUNK);
        const outcomes = await Promise.allSettled([...steps, late]);
        await closed;
        assert.equal(outcomes[0]?.status, 'fulfilled', 'a step sent before close() is answered');
        assert.equal(outcomes[2]?.status, 'rejected', 'a step asked for after close() is refused');
        assert.equal(cp.running, false);
      } finally {
        resume();
        db.close();
      }
    });

    it('stops when a reader keeps the WAL from starting over, having cut nothing it reads', async () => {
      // A reader that took its snapshot before the copy reads it from the WAL's frames.
      let reader: Database.Database | null = null;
      const { db, path, cp, resume, wal } = await copiedBackWal('shrink-reader.db', (file) => {
        reader = new Database(file, { readonly: true });
        reader.exec('BEGIN');
        assert.equal(reader.prepare('SELECT count(*) FROM t').pluck().get(), 3000);
      });
      assert.ok(reader !== null);
      const r = reader as Database.Database;
      try {
        const before = wal();
        const step = await cp.shrink(CHUNK);
        assert.equal(step.cut, 0);
        assert.equal(step.done, true);
        assert.ok(wal() >= before, 'no frame was cut');
        assert.equal(r.prepare('SELECT count(*) FROM t').pluck().get(), 3000);
        r.exec('COMMIT');
        resume();
        assert.deepEqual(reopened(path), { rows: 3000, check: 'ok' });
      } finally {
        if (r.inTransaction) r.exec('COMMIT');
        r.close();
        resume();
        await cp.close();
        db.close();
      }
    });
  });

  it('reports a dead worker through onStopped, and pause() and close() still return', {
    timeout: 120_000,
  }, async () => {
    // No such file: the worker's connection fails to open and the thread exits.
    const stopped: string[] = [];
    const cp = new Checkpointer({
      path: join(tempRoot, 'missing', 'gone.db'),
      intervalMs: 1,
      onLongWal: () => {},
      onStopped: (reason) => stopped.push(reason),
    });
    cp.noteWrite();
    for (let i = 0; i < 400 && stopped.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    assert.equal(stopped.length, 1, 'onStopped was called');
    assert.ok(cp.lastError !== null);
    const resume = await cp.pause();
    resume();
    await cp.close();
    assert.equal(stopped.length, 1, 'a requested close is not a stop');
  });

  it('keeps a failing onLongWal from rejecting a tick (no unhandled rejection)', async () => {
    const { db, path } = openDb('throwing.db');
    const rejections: unknown[] = [];
    const onRejection = (err: unknown) => rejections.push(err);
    process.on('unhandledRejection', onRejection);
    let calls = 0;
    const cp = new Checkpointer({
      path,
      intervalMs: 10,
      maxWalPages: 200,
      onLongWal: () => {
        calls++;
        throw new Error('disk I/O error');
      },
    });
    try {
      await writeSteadily(db, path, 600, () => cp.noteWrite());
      // On a loaded machine the checkpoint worker may first see the long WAL after the last write:
      // the throwing onLongWal leaves the WAL long and the store dirty, so the ticks go on (<= 60 s).
      for (let w = 0; calls === 0 && w < 6000; w++) await new Promise((r) => setTimeout(r, 10));
      assert.ok(calls > 0, 'the WAL passed maxWalPages');
      assert.deepEqual(rejections, []);
      assert.match(cp.lastError ?? '', /disk I\/O error/);
    } finally {
      process.off('unhandledRejection', onRejection);
      await cp.close();
      db.close();
    }
  });

  it("startCheckpointer() turns the store connection's inline checkpoints back on when the worker stops", async () => {
    const { db } = openDb('fallback.db');
    // The worker is pointed at a file it cannot open, so it stops at once.
    const cp = startCheckpointer(db, join(tempRoot, 'missing', 'fallback.db'));
    try {
      const inline = () => db.pragma('wal_autocheckpoint', { simple: true });
      for (let i = 0; i < 400 && inline() === 0; i++) await new Promise((r) => setTimeout(r, 5));
      assert.ok(cp.lastError !== null);
      assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), 8000);
    } finally {
      await cp.close();
      db.close();
    }
  });
});
