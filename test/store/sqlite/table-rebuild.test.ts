/**
 * Table rebuilds (src/store/sqlite/table-rebuild.ts), on the real resume tables: writes made between
 * the copy's steps (insert, replace, update, delete) are all in the rebuilt table, its unique index is
 * kept (under the twin name) and still refuses duplicates; what a stopped rebuild left is dropped at
 * open, and a table marked for a rebuild that never finished is rebuilt then.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { migrate } from '../../../src/store/sqlite/migrations.ts';
import type { PurgeProgress } from '../../../src/store/sqlite/purge.ts';
import { openSqliteStore } from '../../../src/store/sqlite/sqlite-store.ts';
import { leftoverRebuilds, markRebuild, rebuildTable } from '../../../src/store/sqlite/table-rebuild.ts';
import { freshNamespace } from '../conformance/helpers.ts';
import { fenceOf, held, makeTurn, T0 } from '../conformance/resume-helpers.ts';

/** A migrated in-memory database with `n` turns of namespace `ns` (every other one with a message id). */
function withTurns(n: number, ns = 't:a'): Database.Database {
  const db = new Database(':memory:');
  migrate(db);
  const put = db.prepare(
    `INSERT INTO turns (namespace, seq, role, content, message_id, at, epoch) VALUES (?, ?, 'user', ?, ?, 0, 1)`,
  );
  for (let i = 0; i < n; i++) put.run(ns, i, `turn ${i}`, i % 2 === 0 ? `m${i}` : null);
  return db;
}

const rows = (db: Database.Database) =>
  db.prepare('SELECT namespace, seq, content, message_id FROM turns ORDER BY namespace, seq').all();
const progress = (): PurgeProgress => ({ deletes: 0, copies: 0, merges: 0, rebuilds: 0, walCuts: 0 });

describe('rebuildTable', () => {
  it('keeps every write made between its steps, and the unique index under its twin name', async () => {
    const db = withTurns(200);
    const p = progress();
    // A statement per transaction: the copy takes 25 steps (8 rows each), with writes between them.
    const rebuild = rebuildTable(db, 'turns', { progress: p, sliceMs: 1e-9 });
    const writes = [
      () =>
        db
          .prepare(
            `INSERT INTO turns (namespace, seq, role, content, at, epoch) VALUES ('t:b', 0, 'user', 'new', 0, 1)`,
          )
          .run(),
      () => db.prepare(`UPDATE turns SET content = 'changed early' WHERE namespace = 't:a' AND seq = 3`).run(),
      () => db.prepare(`UPDATE turns SET content = 'changed late' WHERE namespace = 't:a' AND seq = 190`).run(),
      () => db.prepare(`DELETE FROM turns WHERE namespace = 't:a' AND seq IN (5, 195)`).run(),
      () =>
        db
          .prepare(
            `INSERT OR REPLACE INTO turns (namespace, seq, role, content, message_id, at, epoch)
             VALUES ('t:a', 7, 'user', 'replaced', 'm7', 0, 1)`,
          )
          .run(),
    ];
    for (const write of writes) {
      const seen = p.copies;
      for (let turns = 0; p.copies === seen && turns < 100_000; turns++) await nextTurn();
      assert.ok(p.copies > seen && p.rebuilds === 0, 'the copy is under way');
      write();
    }
    const expected = rows(db);
    await rebuild;
    assert.equal(p.rebuilds, 1);
    assert.ok(p.copies >= 25, `copied in steps: ${p.copies}`);
    assert.deepEqual(rows(db), expected);
    const tables = db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE 'turns%'`).pluck();
    assert.deepEqual(tables.all(), ['turns']);
    const indexes = db.prepare(
      `SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'turns' ORDER BY name`,
    );
    assert.deepEqual(indexes.pluck().all(), ['sqlite_autoindex_turns_1', 'turns_message__b']);
    assert.throws(
      () =>
        db
          .prepare(
            `INSERT INTO turns (namespace, seq, role, content, message_id, at, epoch) VALUES ('t:a', 999, 'user', 'x', 'm0', 0, 1)`,
          )
          .run(),
      /UNIQUE constraint failed: turns.namespace, turns.message_id/,
    );
    // A second rebuild takes the first name back.
    await rebuildTable(db, 'turns', { progress: p });
    assert.deepEqual(indexes.pluck().all(), ['sqlite_autoindex_turns_1', 'turns_message']);
    assert.deepEqual(rows(db), expected);
    db.close();
  });

  it('rebuilds a WITHOUT ROWID table (leases) keyed by namespace', async () => {
    const db = withTurns(0);
    const put = db.prepare(
      `INSERT INTO leases (namespace, holder, epoch, acquired_at, expires_at, ttl_ms) VALUES (?, 'pod', 1, 0, 1, 1)`,
    );
    for (let i = 0; i < 50; i++) put.run(`t${i}:a`);
    const before = db.prepare('SELECT * FROM leases ORDER BY namespace').all();
    await rebuildTable(db, 'leases', { progress: progress(), sliceMs: 1e-9 });
    assert.deepEqual(db.prepare('SELECT * FROM leases ORDER BY namespace').all(), before);
    db.close();
  });
});

describe('leftoverRebuilds', () => {
  it('drops the copy and the old table a stopped rebuild left, and names the tables still marked', () => {
    const db = withTurns(3);
    db.exec('CREATE TABLE turns__rebuild (x); CREATE TABLE pointers__purged (x)');
    markRebuild(db, 'turns');
    db.prepare(`INSERT INTO meta (key, value) VALUES ('rebuild:gone_table', 1)`).run();
    assert.deepEqual(leftoverRebuilds(db), ['turns']);
    const names = db.prepare(`SELECT name FROM sqlite_schema WHERE name LIKE '%\\_\\_%' ESCAPE '\\'`).pluck().all();
    assert.deepEqual(names, []);
    assert.equal(rows(db).length, 3);
    db.close();
  });
});

describe('SqliteStore open after a purge stopped before its rebuild', () => {
  it('rebuilds the marked tables in the background and clears the marks', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tether-rebuild-'));
    try {
      const first = openSqliteStore({ dataDir: dir });
      const ns = freshNamespace();
      const lease = await held(first, ns);
      await first.writeResume(fenceOf(lease, T0), [{ kind: 'turn', turn: makeTurn(ns, { epoch: lease.epoch }) }]);
      await first.close();
      const raw = new Database(join(dir, 'tether.db'));
      markRebuild(raw, 'turns');
      raw.exec('CREATE TABLE turns__rebuild (x)');
      raw.close();

      const second = openSqliteStore({ dataDir: dir });
      try {
        for (let turns = 0; second.purgeStats.rebuilds === 0 && turns < 100_000; turns++) await nextTurn();
        assert.equal(second.purgeStats.rebuilds, 1);
        assert.equal(await second.countTurns(ns), 1);
      } finally {
        await second.close();
      }
      const check = new Database(join(dir, 'tether.db'), { readonly: true });
      assert.deepEqual(check.prepare(`SELECT key FROM meta WHERE key LIKE 'rebuild:%'`).all(), []);
      check.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
