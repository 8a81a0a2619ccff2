/**
 * The SQLite purge (src/store/sqlite/purge.ts, issue 9 item 5): an empty namespace's purge rewrites
 * nothing, and a real purge's VACUUM runs off the event loop: reads are answered while it runs, and a
 * write made meanwhile waits for it instead of failing or blocking the loop.
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
  it('does nothing for a namespace with nothing stored: no VACUUM', async () => {
    const keep = freshNamespace();
    const store = await loadedStore('empty', [keep], 1000);
    try {
      assert.equal(await store.purgeNamespace(freshNamespace()), 0);
      assert.equal(store.purgeStats.vacuums, 0);
      assert.equal((await store.exportEvents({ namespace: keep, limit: 5000 })).length, 1000);
    } finally {
      await store.close();
    }
  });

  it('answers reads while its VACUUM runs, and holds a write made meanwhile until it ends', async () => {
    const [gone, keep] = [freshNamespace(), freshNamespace()];
    const store = await loadedStore('real', [gone, keep], 3000);
    try {
      let readsDuringVacuum = 0;
      let writeDone = false;
      let purgeDone = false;
      let wroteDuringVacuum: Promise<void> | null = null;
      const purge = store.purgeNamespace(gone).then((n) => {
        purgeDone = true;
        return n;
      });
      while (!purgeDone) {
        const beliefs = await store.currentBeliefs({ namespace: keep, subject: 's7', limit: 5 });
        assert.equal(beliefs.length, 1);
        if (store.vacuuming) {
          readsDuringVacuum++;
          wroteDuringVacuum ??= store.insertKey(makeKey('t')).then(() => {
            writeDone = true;
            assert.ok(purgeDone || !store.vacuuming, 'the write waited for the VACUUM');
          });
        }
        await nextTurn();
      }
      assert.equal(await purge, 3000);
      assert.equal(store.purgeStats.vacuums, 1);
      assert.ok(readsDuringVacuum > 0, 'a read was answered while the VACUUM ran');
      assert.ok(wroteDuringVacuum, 'a write was made during the VACUUM');
      await wroteDuringVacuum;
      assert.ok(writeDone);
      assert.equal((await store.exportEvents({ namespace: gone, limit: 10 })).length, 0);
      assert.equal((await store.exportEvents({ namespace: keep, limit: 5000 })).length, 3000);
    } finally {
      await store.close();
    }
  });
});
