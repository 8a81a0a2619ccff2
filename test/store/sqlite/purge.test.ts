/**
 * The SQLite purge (src/store/sqlite/purge.ts, purge-runner.ts, issues 9 and 21): an empty namespace's
 * purge touches nothing, and a real purge goes in short steps, resume records and the rebuild of their
 * tables included: reads are answered and other namespaces' writes (events, keys, leases, resume
 * records) are stored between them, long before the purge ends (followed by the purge's step counters).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { inSlices } from '../../../src/store/sqlite/purge.ts';
import { openSqliteStore } from '../../../src/store/sqlite/sqlite-store.ts';
import { freshNamespace, heldAll, makeEvent, makeKey } from '../conformance/helpers.ts';
import { fenceOf, held, makeState, makeTurn, T0 } from '../conformance/resume-helpers.ts';

const tempRoot = mkdtempSync(join(tmpdir(), 'tether-purge-'));
after(() => rmSync(tempRoot, { recursive: true, force: true }));

async function loadedStore(name: string, namespaces: string[], perNamespace: number) {
  const store = openSqliteStore({ dataDir: join(tempRoot, name) });
  for (const ns of namespaces) {
    for (let i = 0; i < perNamespace; i += 500) {
      const events = Array.from({ length: 500 }, (_, j) =>
        makeEvent(ns, {
          subject: `s${i + j}`,
          predicate: 'note',
          value: `words number ${i + j}`,
          valueKey: `words number ${i + j}`,
        }),
      );
      await store.appendEvents(events, heldAll(events));
    }
  }
  return store;
}

describe('SqliteStore.purgeNamespace', () => {
  it('does nothing for a namespace with nothing stored', async () => {
    const keep = freshNamespace();
    const store = await loadedStore('empty', [keep], 1000);
    try {
      assert.equal(await store.purgeNamespace(freshNamespace()), 0);
      assert.deepEqual(store.purgeStats, { erasures: 0, deletes: 0, copies: 0, merges: 0, rebuilds: 0, walCuts: 0 });
      assert.equal((await store.exportEvents({ namespace: keep, limit: 5000 })).length, 1000);
    } finally {
      await store.close();
    }
  });

  it("answers reads and stores other namespaces' writes between its steps", async () => {
    const [gone, keep] = [freshNamespace(), freshNamespace()];
    const store = await loadedStore('real', [gone, keep], 3000);
    try {
      const order: string[] = [];
      const purge = store.purgeNamespace(gone).then((n) => {
        order.push('purge');
        return n;
      });
      const start = { ...store.purgeStats };
      // Once the purge has committed a delete, a read and a write of another namespace go in.
      for (let turns = 0; store.purgeStats.deletes === start.deletes && turns < 100_000; turns++) await nextTurn();
      assert.ok(store.purgeStats.deletes > start.deletes, 'the purge committed a first delete');
      const beliefs = await store.currentBeliefs({ namespace: keep, subject: 's7', limit: 5 });
      assert.equal(beliefs.length, 1);
      const extra = makeEvent(keep, { subject: 'during', predicate: 'note', value: 'written during the purge' });
      const write = store.appendEvents([extra], heldAll([extra])).then(() => order.push('write'));
      const key = store.insertKey(makeKey('t')).then(() => order.push('key'));
      const deletesAtWrite = store.purgeStats.deletes;
      await Promise.all([write, key]);
      assert.ok(!order.includes('purge'), `the writes were stored before the purge ended: ${order}`);
      assert.equal(await purge, 3000);
      assert.ok(store.purgeStats.deletes > deletesAtWrite, 'the purge went on deleting after the writes');
      assert.ok(store.purgeStats.merges > start.merges, 'the FTS segments were merged');
      assert.equal(store.purgeStats.erasures, start.erasures + 1);
      assert.equal((await store.exportEvents({ namespace: gone, limit: 10 })).length, 0);
      assert.equal((await store.exportEvents({ namespace: keep, limit: 5000 })).length, 3001);
      assert.deepEqual(await store.searchEvents(gone, ['words'], 10), []);
      assert.equal((await store.searchEvents(keep, ['during'], 10)).length, 1);
    } finally {
      await store.close();
    }
  });

  it("cuts the WAL file's dead tail in steps before its TRUNCATE, storing other namespaces' writes between them", async () => {
    const [gone, keep] = [freshNamespace(), freshNamespace()];
    const dataDir = join(tempRoot, 'wal-cuts');
    const store = await loadedStore('wal-cuts', [gone, keep], 5000);
    const wal = join(dataDir, 'tether.db-wal');
    try {
      const order: string[] = [];
      const purge = store.purgeNamespace(gone).then(() => order.push('purge'));
      let largest = 0;
      for (let turns = 0; store.purgeStats.walCuts === 0 && order.length === 0 && turns < 1_000_000; turns++) {
        largest = Math.max(largest, statSync(wal).size);
        await nextTurn();
      }
      assert.ok(store.purgeStats.walCuts > 0, 'a first step cut the WAL file');
      // A key, not an event: an event's FTS rows are indexed in the background and may rightly land in
      // the WAL after the TRUNCATE, and the file's size at the end is what this test reads.
      const extra = makeKey('t');
      await store.insertKey(extra);
      order.push('write');
      await purge;
      assert.deepEqual(order, ['write', 'purge']);
      // 4 MiB a step: a file of more than 8 MiB takes at least two.
      assert.ok(largest > 8 * 2 ** 20, `the WAL file reached ${largest} bytes`);
      assert.ok(store.purgeStats.walCuts >= 2, `${store.purgeStats.walCuts} cuts`);
      assert.equal(statSync(wal).size, 0);
      assert.equal((await store.exportEvents({ namespace: keep, limit: 10_000 })).length, 5000);
      assert.deepEqual(await store.getKey(extra.id), extra);
    } finally {
      await store.close();
    }
  });

  it("rebuilds the resume tables in steps too, keeping other namespaces' resume writes made meanwhile", async () => {
    const [gone, keep] = [freshNamespace(), freshNamespace()];
    const store = await loadedStore('resume', [gone], 500);
    try {
      const goneLease = await held(store, gone);
      await store.writeResume(fenceOf(goneLease, T0), [
        { kind: 'working_state', state: makeState(gone, 1, { epoch: goneLease.epoch }) },
        ...Array.from({ length: 50 }, () => ({
          kind: 'turn' as const,
          turn: makeTurn(gone, { epoch: goneLease.epoch }),
        })),
      ]);
      // The kept namespace's turns make the turns table long enough for its copy to take many steps.
      const keepLease = await held(store, keep);
      const keepFence = fenceOf(keepLease, T0);
      const big = 'k'.repeat(2000);
      for (let i = 0; i < 8; i++) {
        const turns = Array.from({ length: 500 }, () => ({
          kind: 'turn' as const,
          turn: makeTurn(keep, { content: big, epoch: keepLease.epoch }),
        }));
        await store.writeResume(keepFence, turns);
      }
      const order: string[] = [];
      const start = { ...store.purgeStats };
      const purge = store.purgeNamespace(gone).then(() => order.push('purge'));
      for (let turns = 0; store.purgeStats.copies === start.copies && turns < 100_000; turns++) await nextTurn();
      assert.ok(store.purgeStats.copies > start.copies, 'the copy of a resume table is under way');
      const copiesAtWrite = store.purgeStats.copies;
      const other = freshNamespace();
      const writes = [
        store
          .writeResume(keepFence, [
            { kind: 'turn', turn: makeTurn(keep, { content: 'written during the rebuild', epoch: keepLease.epoch }) },
            { kind: 'working_state', state: makeState(keep, 1, { epoch: keepLease.epoch }) },
          ])
          .then(() => order.push('resume')),
        store
          .acquireLease({ namespace: other, holder: 'pod-b', ttlMs: 60_000, now: T0 })
          .then(() => order.push('lease')),
        store.appendEvents([makeEvent(keep, { value: 'event during the rebuild' })]).then(() => order.push('event')),
      ];
      await Promise.all(writes);
      assert.ok(!order.includes('purge'), `the writes were stored before the purge ended: ${order}`);
      await purge;
      assert.ok(store.purgeStats.copies > copiesAtWrite, 'the copy went on after the writes');
      // leases, working_states and turns held rows of the purged namespace.
      assert.equal(store.purgeStats.rebuilds, start.rebuilds + 3);
      assert.equal(await store.getLease(gone), null);
      assert.equal(await store.workingState(gone), null);
      assert.equal(await store.countTurns(gone), 0);
      assert.equal(await store.countTurns(keep), 4001);
      assert.equal((await store.workingState(keep))?.version, 1);
      assert.equal((await store.getLease(other))?.holder, 'pod-b');
      assert.equal((await store.getLease(keep))?.epoch, keepLease.epoch);
    } finally {
      await store.close();
    }
  });
});

describe('inSlices', () => {
  it('times each transaction whole (the clock read before BEGIN and after COMMIT) and gives the next the rows that fit the slice at that cost', async (t) => {
    const db = new Database(':memory:');
    t.after(() => db.close());
    db.exec('CREATE TABLE r (id INTEGER PRIMARY KEY)');
    const put = db.prepare('INSERT INTO r (id) VALUES (?)');
    db.transaction(() => {
      for (let i = 1; i <= 300; i++) put.run(i);
    })();
    const del = db.prepare('DELETE FROM r WHERE id IN (SELECT id FROM r LIMIT ?)');
    // The double clock: a transaction costs 0.5 ms a row, the commit's share of it among them (the
    // clock is read before BEGIN and after COMMIT only).
    let clock = 0;
    let rowsThisTx = 0;
    const perTx: number[] = [];
    const limits: number[] = [];
    const handled = await inSlices(
      db,
      (limit) => {
        limits.push(limit);
        const got = del.run(limit).changes;
        rowsThisTx += got;
        return got;
      },
      {
        sliceMs: 4,
        pick: 32,
        now: () => {
          clock += rowsThisTx * 0.5;
          if (rowsThisTx > 0) perTx.push(rowsThisTx);
          rowsThisTx = 0;
          return clock;
        },
        committed: () => {},
      },
    );
    assert.equal(handled, 300);
    assert.equal(db.prepare('SELECT count(*) FROM r').pluck().get(), 0);
    // 32 rows cost 16 ms: the next transactions get the 8 rows a 4 ms slice holds at 0.5 ms a row.
    assert.deepEqual(perTx.slice(0, 3), [32, 8, 8]);
    assert.ok(
      limits.slice(1).every((l) => l <= 8),
      `limits asked ${limits.join(',')}`,
    );
  });
});
