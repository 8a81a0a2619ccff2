/**
 * Schema migrations (src/store/sqlite/migrations.ts): a version-1 database (made before versioning,
 * user_version 0) is brought to the current version with its data; a newer database is refused.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { SCHEMA_VERSION } from '../../../src/store/sqlite/migrations.ts';
import { openSqliteStore } from '../../../src/store/sqlite/sqlite-store.ts';
import { freshNamespace, makeEvent } from '../conformance/helpers.ts';

const tempRoot = mkdtempSync(join(tmpdir(), 'tether-migrations-'));
after(() => rmSync(tempRoot, { recursive: true, force: true }));
const V1 = readFileSync(new URL('../../../src/store/sqlite/001-schema.sql', import.meta.url), 'utf8');

function indexColumns(db: Database.Database, index: string): string[] {
  return (db.prepare(`PRAGMA index_info(${index})`).all() as { name: string }[]).map((c) => c.name);
}

describe('SQLite schema migrations', () => {
  it('upgrades a version-1 database in place and keeps its data', async () => {
    const dir = join(tempRoot, 'v1');
    mkdirSync(dir);
    const ns = freshNamespace();
    const e = makeEvent(ns, { value: 'kept across the upgrade' });
    // A store of this version writes the events; then the file is turned back into version 1.
    const store = openSqliteStore({ dataDir: dir });
    await store.appendEvents(
      [e],
      [{ namespace: ns, subject: e.subject, predicate: e.predicate, add: [{ eventId: e.id, replaced: [] }] }],
    );
    await store.close();
    const raw = new Database(join(dir, 'tether.db'));
    raw.exec('DROP INDEX beliefs_fact; DROP TABLE meta;'); // as version 1 had them
    raw.exec(V1);
    raw.pragma('user_version = 0');
    assert.ok(indexColumns(raw, 'beliefs_value').length > 0);
    raw.close();

    const upgraded = openSqliteStore({ dataDir: dir });
    try {
      const beliefs = await upgraded.currentBeliefs({ namespace: ns, limit: 10 });
      assert.deepEqual(
        beliefs.map((b) => b.event.id),
        [e.id],
      );
      assert.equal((await upgraded.searchEvents(ns, ['upgrade'], 10)).length, 1);
    } finally {
      await upgraded.close();
    }
    const db = new Database(join(dir, 'tether.db'), { readonly: true });
    try {
      assert.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
      assert.deepEqual(indexColumns(db, 'beliefs_value'), []);
      assert.deepEqual(indexColumns(db, 'beliefs_fact'), [
        'namespace',
        'subject',
        'predicate',
        'observed_at',
        'event_id',
        'value_key',
      ]);
    } finally {
      db.close();
    }
  });

  it('refuses a database written by a newer Tether, naming both versions', () => {
    const dir = join(tempRoot, 'future');
    mkdirSync(dir);
    const raw = new Database(join(dir, 'tether.db'));
    raw.pragma(`user_version = ${SCHEMA_VERSION + 5}`);
    raw.close();
    assert.throws(
      () => openSqliteStore({ dataDir: dir }),
      new RegExp(`schema version is ${SCHEMA_VERSION + 5} and this Tether knows up to ${SCHEMA_VERSION}`),
    );
  });
});
