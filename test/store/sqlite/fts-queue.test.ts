/**
 * Deferred FTS indexing (src/store/sqlite/fts-queue.ts) through the real store: a search sees every
 * write made before it, and events whose index rows were still queued when the process died are
 * indexed when the folder is opened again — also after a purge let SQLite reuse their seqs.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { admit, release } from '../../../src/common/light-first.ts';
import type { StoredEvent } from '../../../src/store/fact-store.ts';
import { FtsQueue } from '../../../src/store/sqlite/fts-queue.ts';
import { openSqliteStore } from '../../../src/store/sqlite/sqlite-store.ts';
import { freshNamespace, hitIds, makeEvent } from '../conformance/helpers.ts';

const tempRoot = mkdtempSync(join(tmpdir(), 'tether-fts-queue-'));
after(() => rmSync(tempRoot, { recursive: true, force: true }));
const STORE = new URL('../../../src/store/sqlite/sqlite-store.ts', import.meta.url).href;

/** Appends `events` in a child process that exits without closing the store (a crash, for the queue). */
function appendThenDie(dir: string, events: StoredEvent[]): void {
  const code = `
    const { openSqliteStore } = await import(${JSON.stringify(STORE)});
    const store = openSqliteStore({ dataDir: ${JSON.stringify(dir)} });
    await store.appendEvents(JSON.parse(process.argv[1]));
    process.exit(0);`;
  execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code, JSON.stringify(events)]);
}

/** The FTS mark and the highest event seq, read without the store (so nothing is flushed or recovered). */
function markAndMax(dir: string): { mark: number; max: number } {
  const db = new Database(join(dir, 'tether.db'), { readonly: true });
  try {
    const mark = db.prepare("SELECT value FROM meta WHERE key = 'fts_seq'").pluck().get() as number;
    const max = db.prepare('SELECT coalesce(max(seq), 0) FROM events').pluck().get() as number;
    return { mark, max };
  } finally {
    db.close();
  }
}

describe('deferred FTS indexing', () => {
  it('answers a search right after the write, before any timed flush', async () => {
    const store = openSqliteStore({ dataDir: join(tempRoot, 'ryw') });
    try {
      const ns = freshNamespace();
      const e = makeEvent(ns, { value: 'quokka sighting' });
      await store.appendEvents([e]);
      assert.deepEqual(hitIds(await store.searchEvents(ns, ['quokka'], 10)), [e.id]);
    } finally {
      await store.close();
    }
  });

  it('indexes at open the events a process stored but died before indexing', async () => {
    const dir = join(tempRoot, 'crash');
    const ns = freshNamespace();
    const events = [makeEvent(ns, { value: 'wombat burrow' }), makeEvent(ns, { subject: 'bo', value: 'wombat tea' })];
    appendThenDie(dir, events);
    const before = markAndMax(dir);
    assert.ok(before.mark < before.max, `the child left unindexed events (mark ${before.mark}, max ${before.max})`);

    const store = openSqliteStore({ dataDir: dir });
    try {
      const hits = hitIds(await store.searchEvents(ns, ['wombat'], 10));
      assert.deepEqual(hits.sort(), events.map((e) => e.id).sort());
    } finally {
      await store.close();
    }
    const after = markAndMax(dir);
    assert.equal(after.mark, after.max);
  });

  it('re-indexes reused seqs after a purge erased the newest events', async () => {
    const dir = join(tempRoot, 'purge');
    const keep = freshNamespace();
    const gone = freshNamespace();
    const store = openSqliteStore({ dataDir: dir });
    await store.appendEvents([makeEvent(keep, { value: 'otter' })]);
    await store.appendEvents([makeEvent(gone, { value: 'erased one' }), makeEvent(gone, { value: 'erased two' })]);
    await store.purgeNamespace(gone);
    await store.close();

    // SQLite gives the next events the seqs the purge freed; they die unindexed.
    const fresh = [makeEvent(keep, { value: 'narwhal one' }), makeEvent(keep, { value: 'narwhal two' })];
    appendThenDie(dir, fresh);
    const reopened = openSqliteStore({ dataDir: dir });
    try {
      const hits = hitIds(await reopened.searchEvents(keep, ['narwhal'], 10));
      assert.deepEqual(hits.sort(), fresh.map((e) => e.id).sort());
      assert.deepEqual(await reopened.searchEvents(gone, ['erased'], 10), []);
    } finally {
      await reopened.close();
    }
  });

  describe('when indexing fails (here a trigger refuses the mark, as a full disk would)', () => {
    const FAIL =
      "CREATE TRIGGER no_mark BEFORE INSERT ON meta WHEN NEW.key = 'fts_seq' BEGIN SELECT RAISE(ABORT, 'disk is full'); END";

    it('resolves an append that committed, even when its rows filled the queue, and indexes them later', async () => {
      const dir = join(tempRoot, 'full-queue');
      const store = openSqliteStore({ dataDir: dir });
      const side = new Database(join(dir, 'tether.db'));
      try {
        side.exec(FAIL);
        const ns = freshNamespace();
        const events = Array.from({ length: 4096 }, (_, i) => makeEvent(ns, { subject: `s${i}`, value: 'platypus' }));
        await store.appendEvents(events); // 4096 rows: the queue flushes at once, and that flush fails
        assert.equal(await store.countEvents(), 4096);
        side.exec('DROP TRIGGER no_mark');
        assert.equal((await store.searchEvents(ns, ['platypus'], 5000)).length, 4096);
      } finally {
        side.close();
        await store.close();
      }
    });

    it('close() still closes the database and the worker; the next open indexes the rows', async () => {
      const dir = join(tempRoot, 'close-fails');
      const store = openSqliteStore({ dataDir: dir });
      const side = new Database(join(dir, 'tether.db'));
      side.exec(FAIL);
      const ns = freshNamespace();
      const e = makeEvent(ns, { value: 'echidna' });
      await store.appendEvents([e]);
      await assert.rejects(store.close(), /disk is full/);
      side.exec('DROP TRIGGER no_mark');
      side.close();
      // The last connection to close removes the WAL: none of the store's connections is left open.
      assert.equal(existsSync(join(dir, 'tether.db-wal')), false);

      const reopened = openSqliteStore({ dataDir: dir });
      try {
        assert.deepEqual(hitIds(await reopened.searchEvents(ns, ['echidna'], 10)), [e.id]);
      } finally {
        await reopened.close();
      }
    });
  });
});

/** An in-memory database with the tables the queue writes (meta, events, an FTS5 events_fts), closed after `t`. */
function indexDb(t: TestContext): Database.Database {
  const db = new Database(':memory:');
  t.after(() => db.close());
  db.exec('CREATE TABLE meta (key TEXT PRIMARY KEY, value); CREATE TABLE events (seq INTEGER PRIMARY KEY);');
  db.exec('CREATE VIRTUAL TABLE events_fts USING fts5(body)');
  return db;
}

describe('FtsQueue timed flushes', () => {
  it('index at most 256 rows per transaction, the rest in the next turns; a read-time flush takes all', async (t) => {
    const db = indexDb(t);
    const queue = new FtsQueue(db, { delayMs: 1 });
    const rows = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ seq: from + i, body: `b${i}` }));
    // Each background step waits for a turn of the loop (an immediate): watched at every turn, one at a time.
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    queue.addAll(rows(1, 600));
    const sizes: number[] = [];
    for (let i = 0; i < 1_000_000 && queue.pending > 0; i++) {
      const before = queue.pending;
      await turn();
      if (queue.pending < before) sizes.push(before - queue.pending);
    }
    assert.equal(queue.pending, 0);
    assert.ok(
      sizes.every((n) => n <= 256),
      `flushed ${sizes.join(', ')}`,
    );
    assert.equal(db.prepare('SELECT count(*) FROM events_fts').pluck().get(), 600);
    assert.equal(queue.mark, 600);
    queue.addAll(rows(601, 700));
    queue.flush();
    assert.equal(queue.pending, 0);
    assert.equal(queue.mark, 1300);
  });

  it('merges the index in steps of its own after a flush, never inside it, until no level holds 4 segments', async (t) => {
    const db = indexDb(t);
    const queue = new FtsQueue(db, { delayMs: 60_000 });
    const segments = () => db.prepare('SELECT count(DISTINCT segid) FROM events_fts_idx').pluck().get() as number;
    const automerge = db.prepare("SELECT v FROM events_fts_config WHERE k = 'automerge'").pluck().get();
    assert.equal(automerge, 0, 'automerge is off in the index config');
    // Twelve flushes in one turn: each writes a segment, and none merges (merging waits for a turn).
    for (let i = 0; i < 12; i++) {
      queue.addAll([{ seq: i + 1, body: `wombat ${i} burrow` }]);
      queue.flush();
    }
    assert.equal(segments(), 12);
    assert.equal(queue.merges, 0);
    await queue.settled();
    assert.ok(queue.merges >= 2, `${queue.merges} merge steps`);
    assert.ok(segments() < 4, `${segments()} segments left`);
    const hits = db.prepare("SELECT count(*) FROM events_fts WHERE events_fts MATCH 'wombat'").pluck().get();
    assert.equal(hits, 12, 'every row is still found');
  });

  it('merges between two background flushes while rows keep waiting, not only once none does', async (t) => {
    const db = indexDb(t);
    const queue = new FtsQueue(db, { delayMs: 60_000, maxRows: 1 });
    for (let i = 0; i < 12; i++) {
      queue.addAll([{ seq: i + 1, body: `bilby ${i}` }]);
      queue.flush(); // twelve segments: a level to merge
    }
    queue.addAll(Array.from({ length: 3000 }, (_, i) => ({ seq: 13 + i, body: `bandicoot ${i}` })));
    let mergedWhileQueued = false;
    for (let i = 0; i < 1_000_000 && queue.pending > 0; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      if (queue.merges > 0 && queue.pending > 0) mergedWhileQueued = true;
    }
    await queue.settled();
    assert.equal(queue.pending, 0);
    assert.ok(mergedWhileQueued, `merges ${queue.merges}, flush steps ${queue.steps}`);
  });

  it('merges only as much as its flushes earned: one step a flush, one more per 64 rows', async (t) => {
    const db = indexDb(t);
    const queue = new FtsQueue(db, { delayMs: 60_000 }); // automerge off from here
    // Twelve segments of many pages each, written past the queue: far more merge work than one step's 16 pages.
    const put = db.prepare('INSERT INTO events_fts (rowid, body) VALUES (?, ?)');
    let seq = 0;
    for (let s = 0; s < 12; s++) {
      db.transaction(() => {
        for (let i = 0; i < 400; i++) put.run(++seq, `segment${s} word${seq} other${seq * 7} more${seq * 13}`);
      })();
    }
    queue.addAll([{ seq: ++seq, body: 'echidna' }]);
    queue.flush(); // earns one merge step
    await queue.settled();
    assert.equal(queue.merges, 1);
    queue.addAll(Array.from({ length: 64 }, () => ({ seq: ++seq, body: 'echidna spines' })));
    queue.flush(); // 64 rows: earns two
    await queue.settled();
    assert.equal(queue.merges, 3);
  });

  it("indexes in the background as no request's work: the request whose write queued the rows stays light", async (t) => {
    const db = indexDb(t);
    const queue = new FtsQueue(db, { delayMs: 1 });
    const ticket = admit();
    t.after(() => release(ticket));
    queue.addAll([{ seq: 1, body: 'numbat' }]); // from a request's write, while its ticket is light
    await new Promise((resolve) => setTimeout(resolve, 5));
    await queue.settled();
    assert.equal(queue.pending, 0);
    assert.ok(queue.steps >= 1);
    assert.equal(ticket.light, true, 'the background steps did not demote the request');
  });

  it('merges only once writes are no longer held (a purge truncating the WAL)', async (t) => {
    const db = indexDb(t);
    let release = () => {};
    let hold: Promise<void> | null = new Promise<void>((resolve) => {
      release = resolve;
    });
    const queue = new FtsQueue(db, { delayMs: 60_000, held: () => hold });
    for (let i = 0; i < 6; i++) {
      queue.addAll([{ seq: i + 1, body: `quokka ${i}` }]);
      queue.flush();
    }
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(queue.merges, 0, 'no merge step while writes are held');
    hold = null;
    release();
    await queue.settled();
    assert.ok(queue.merges >= 1);
  });
});
