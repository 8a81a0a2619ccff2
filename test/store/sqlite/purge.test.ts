/**
 * The SQLite purge (src/store/sqlite/purge.ts, issues 9 and 21): an empty namespace's purge touches
 * nothing, and a real purge goes in short steps: reads are answered and other namespaces' writes are
 * stored between them, long before the purge ends (followed by the purge's own step counters).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { openSqliteStore } from '../../../src/store/sqlite/sqlite-store.ts';
import { freshNamespace, heldAll, makeEvent, makeKey } from '../conformance/helpers.ts';

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
      assert.deepEqual(store.purgeStats, { erasures: 0, deletes: 0, merges: 0 });
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
});
