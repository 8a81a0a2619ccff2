/**
 * The SQLite store's read pool (issue 21, point 3): heavy reads run on worker threads with their own
 * read-only connections and answer exactly what the same read on a direct connection answers; a read
 * sent right after a committed write sees it (search included: the FTS queue is flushed first).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { SqliteReads } from '../../../src/store/sqlite/read-queries.ts';
import { openSqliteStore } from '../../../src/store/sqlite/sqlite-store.ts';
import { freshNamespace, heldAll, makeEvent } from '../conformance.ts';

const root = mkdtempSync(join(tmpdir(), 'tether-read-pool-'));
after(() => rmSync(root, { recursive: true, force: true }));

describe('SqliteStore read pool', () => {
  it('answers every pooled read as a direct connection does', async (t) => {
    const store = openSqliteStore({ dataDir: join(root, 'same') });
    t.after(() => store.close());
    const ns = freshNamespace();
    const events = Array.from({ length: 300 }, (_, i) =>
      makeEvent(ns, {
        subject: `s${i % 7}`,
        predicate: i % 2 ? 'note' : 'role',
        value: `alpha ${i}`,
        valueKey: `alpha ${i}`,
        observedAt: 1000 + (i % 13),
        retraction: i % 17 === 0,
      }),
    );
    await store.appendEvents(events, heldAll(events.filter((e) => !e.retraction)));
    await store.searchEvents(ns, ['alpha'], 1); // flushes the FTS queue: the direct reader sees it too
    const db = new Database(store.path, { readonly: true });
    t.after(() => db.close());
    const direct = new SqliteReads(db);
    const groups = [
      { subject: 's3', predicate: 'note' },
      { subject: 's1', predicate: 'role' },
    ];
    const before = store.pooledReads;
    assert.deepEqual(
      await store.searchBeliefs({ namespace: ns, terms: ['alpha'], limit: 1000 }),
      direct.searchBeliefs({ namespace: ns, terms: ['alpha'], limit: 1000 }),
    );
    assert.deepEqual(await store.searchEvents(ns, ['alpha'], 50), direct.searchEvents(ns, ['alpha'], 50));
    assert.deepEqual(
      await store.currentBeliefs({ namespace: ns, limit: 500 }),
      direct.currentBeliefs({ namespace: ns, limit: 500 }),
    );
    const log = { namespace: ns, groups, asOf: 1008, limit: 25 };
    const page = await store.factLog(log);
    assert.equal(page.length, 25);
    assert.deepEqual(page, direct.factLog(log));
    const after = { ...log, after: page[24] as (typeof page)[number] };
    assert.deepEqual(await store.factLog(after), direct.factLog(after));
    const count = { namespace: ns, groups, max: 30 };
    assert.equal(await store.countFactEvents(count), direct.countFactEvents(count));
    const list = { namespace: ns, limit: 10, maxSteps: 100 };
    assert.deepEqual(await store.factGroups(list), direct.factGroups(list));
    assert.deepEqual(
      await store.exportEvents({ namespace: ns, limit: 120 }),
      direct.exportEvents({ namespace: ns, limit: 120 }),
    );
    assert.equal(store.pooledReads - before, 8, 'every one of these reads ran on a worker');
  });

  it('sees a write committed just before the read, search included', async (t) => {
    const store = openSqliteStore({ dataDir: join(root, 'fresh') });
    t.after(() => store.close());
    const ns = freshNamespace();
    for (let i = 0; i < 20; i++) {
      const e = makeEvent(ns, { subject: 'bob', predicate: 'note', value: `zeta${i}`, valueKey: `zeta${i}` });
      await store.appendEvents([e], heldAll([e]));
      const hits = await store.searchBeliefs({ namespace: ns, terms: [`zeta${i}`], limit: 5 });
      assert.deepEqual(
        hits.map((b) => b.event.id),
        [e.id],
      );
      const log = await store.factLog({ namespace: ns, groups: [{ subject: 'bob', predicate: 'note' }], limit: 100 });
      assert.equal(log.length, i + 1);
    }
  });

  it('reads inline in memory (no file to share) with the same answers', async (t) => {
    const store = openSqliteStore({ dataDir: ':memory:' });
    t.after(() => store.close());
    const ns = freshNamespace();
    const e = makeEvent(ns, { value: 'omega' });
    await store.appendEvents([e], heldAll([e]));
    assert.equal((await store.searchBeliefs({ namespace: ns, terms: ['omega'], limit: 5 })).length, 1);
    assert.equal(store.pooledReads, 0);
  });
});
