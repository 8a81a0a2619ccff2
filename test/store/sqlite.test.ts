/**
 * The SQLite driver: the shared `Store` conformance suite (in memory and on disk), then what only a
 * file store can show: data survives a reopen, and a purge leaves no byte of the namespace in any file.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { changeOf, freshNamespace, heldAll, makeEvent, storeConformance } from './conformance.ts';

const tempRoot = mkdtempSync(join(tmpdir(), 'tether-sqlite-test-'));
after(() => rmSync(tempRoot, { recursive: true, force: true }));

let folders = 0;
/** A new empty data folder under the temp root. */
function freshFolder(): string {
  folders += 1;
  return join(tempRoot, `data-${folders}`);
}

storeConformance('sqlite (:memory:)', async () => openSqliteStore({ dataDir: ':memory:' }));

const sharedFolder = freshFolder();
storeConformance('sqlite (file)', async () => openSqliteStore({ dataDir: sharedFolder }));

/** Every file under `dir` (recursively) whose bytes contain `needle`. */
function filesContaining(dir: string, needle: string): string[] {
  const bytes = Buffer.from(needle, 'utf8');
  const out: string[] = [];
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const path = join(dir, name);
    if (!statSync(path).isFile()) continue;
    if (readFileSync(path).includes(bytes)) out.push(name);
  }
  return out;
}

describe('SqliteStore on disk', () => {
  it('keeps events, beliefs, registry versions and keys across close and reopen of the same folder', async () => {
    const dir = freshFolder();
    const ns = freshNamespace();
    const tenant = ns.slice(0, ns.indexOf(':'));
    const events = [makeEvent(ns, { value: 'red' }), makeEvent(ns, { subject: 'bob', value: 'teal' })];
    const version = {
      id: 'ev_000000000000000000000001',
      tenant,
      recordedAt: 0,
      predicates: [{ name: 'note', cardinality: 'multi' as const, valueType: 'string' as const }],
    };
    const key = {
      id: randomBytes(8).toString('hex'),
      hash: 'a'.repeat(64),
      tenant,
      agent: null,
      session: null,
      admin: true,
      note: null,
      createdAt: 1,
      expiresAt: null,
      revokedAt: null,
    };

    const first = openSqliteStore({ dataDir: dir });
    await first.appendEvents(events, heldAll(events));
    await first.appendRegistryVersion(version);
    await first.insertKey(key);
    await first.close();

    const second = openSqliteStore({ dataDir: dir });
    try {
      assert.deepEqual(await second.exportEvents({ namespace: ns, limit: 10 }), events);
      assert.deepEqual(
        (await second.searchEvents(ns, ['teal'], 10)).map((h) => h.eventId),
        [events[1]?.id],
      );
      assert.deepEqual(await second.registryVersions(tenant), [version]);
      assert.deepEqual(await second.getKey(key.id), key);
      assert.equal(await second.countEvents(), 2);
      assert.deepEqual(await second.currentBeliefs({ namespace: ns, limit: 10 }), [
        { event: events[0], replaced: [] },
        { event: events[1], replaced: [] },
      ]);
    } finally {
      await second.close();
    }
  });

  it('creates a missing data folder and keeps one database file in it', async () => {
    const dir = join(freshFolder(), 'nested', 'deeper');
    const store = openSqliteStore({ dataDir: dir });
    await store.ping();
    await store.close();
    assert.deepEqual(readdirSync(dir), ['tether.db']);
  });
});

describe('SqliteStore.purgeNamespace', () => {
  /** Rows per namespace; 100 reliably reproduces the leftover index bytes described below. */
  const ROWS = 100;

  /**
   * Fills a fresh folder with a namespace to purge and one to keep, each marked by a unique word
   * in subject, value and evidence, with enough rows that the data spans many pages, the WAL and FTS segments.
   */
  async function seeded(): Promise<{
    store: Store;
    dir: string;
    gone: string;
    kept: string;
    goneMark: string;
    keptMark: string;
    goneTail: string;
  }> {
    const dir = freshFolder();
    const store = openSqliteStore({ dataDir: dir });
    const gone = freshNamespace();
    const kept = freshNamespace();
    const goneTail = randomBytes(8).toString('hex');
    const goneMark = `zqxmarker${goneTail}`;
    const keptMark = `zqxmarker${randomBytes(8).toString('hex')}`;
    for (let i = 0; i < ROWS; i++) {
      for (const [ns, mark] of [
        [gone, goneMark],
        [kept, keptMark],
      ] as const) {
        const e = makeEvent(ns, {
          subject: `${mark} person ${i}`,
          predicate: 'note',
          value: `${mark} value ${i}`,
          valueKey: `${mark} value ${i}`,
          evidence: `said ${mark} at turn ${i}`,
        });
        // Each event is also a current belief (rows keyed by namespace and subject, with the
        // marker in what it replaced), so the "now" projection must be erased as well.
        await store.appendEvents(
          [e],
          [changeOf(ns, e.subject, e.predicate, [[e, [{ value: `${mark} earlier value ${i}`, observedAt: i }]]])],
        );
      }
    }
    return { store, dir, gone, kept, goneMark, keptMark, goneTail };
  }

  it('erases the namespace and keeps the other one, also after close and reopen', async () => {
    const { store, dir, gone, kept, keptMark } = await seeded();
    assert.equal((await store.currentBeliefs({ namespace: gone, limit: 1000 })).length, ROWS);
    assert.equal(await store.purgeNamespace(gone), ROWS);
    assert.deepEqual(await store.exportEvents({ namespace: gone, limit: 10 }), []);
    assert.deepEqual(await store.currentBeliefs({ namespace: gone, limit: 10 }), []);
    assert.equal((await store.searchEvents(kept, [keptMark], 1000)).length, ROWS);
    assert.equal((await store.searchBeliefs({ namespace: kept, terms: [keptMark], limit: 1000 })).length, ROWS);
    await store.close();
    assert.ok(filesContaining(dir, keptMark).includes('tether.db'), 'the other namespace is still on disk');

    const reopened = openSqliteStore({ dataDir: dir });
    try {
      assert.deepEqual(await reopened.exportEvents({ namespace: gone, limit: 10 }), []);
      assert.equal((await reopened.exportEvents({ namespace: kept, limit: 1000 })).length, ROWS);
      assert.equal((await reopened.searchEvents(kept, [keptMark], 1000)).length, ROWS);
      assert.equal(await reopened.countEvents(), ROWS);
      assert.deepEqual(await reopened.currentBeliefs({ namespace: gone, limit: 10 }), []);
      assert.equal((await reopened.currentBeliefs({ namespace: kept, limit: 1000 })).length, ROWS);
    } finally {
      await reopened.close();
    }
  });

  // Regression (was a bug): with 100 rows per namespace a copy of an `events_fact` index key
  // (`<namespace><subject>`) survives in the unallocated area of a live index leaf page of tether.db:
  // secure_delete does not clear space left behind when a page is rebuilt. VACUUM after the purge clears it.
  it('leaves no byte of the namespace in any file, -wal and -shm included, while open and after close', async () => {
    const { store, dir, gone, kept, goneMark, keptMark, goneTail } = await seeded();
    assert.ok(filesContaining(dir, goneMark).length > 0, 'the marker is on disk before the purge');

    assert.equal(await store.purgeNamespace(gone), ROWS);
    assert.ok(readdirSync(dir).includes('tether.db'));
    // The random tail too: the FTS index stores terms prefix-compressed.
    assert.deepEqual(filesContaining(dir, goneMark), [], 'while open');
    assert.deepEqual(filesContaining(dir, goneTail), [], 'while open (marker tail)');
    assert.ok(filesContaining(dir, keptMark).includes('tether.db'), 'the other namespace is still on disk');

    await store.appendEvents([makeEvent(kept, { value: 'written after the purge' })]);
    assert.deepEqual(filesContaining(dir, goneMark), [], 'after a later write');
    await store.close();
    assert.deepEqual(filesContaining(dir, goneMark), [], 'after close');
    assert.deepEqual(filesContaining(dir, goneTail), [], 'after close (marker tail)');
    assert.ok(filesContaining(dir, keptMark).length > 0, 'the other namespace is still on disk after close');
  });
});
