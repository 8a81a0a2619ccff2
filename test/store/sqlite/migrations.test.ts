/**
 * Schema migrations (src/store/sqlite/migrations.ts): a version-1 database (made before versioning,
 * user_version 0) is brought to the current version with its events, index and beliefs; a newer
 * database is refused.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { eventToRow } from '../../../src/store/event-rows.ts';
import { ftsBody } from '../../../src/store/sqlite/fts.ts';
import { SCHEMA_VERSION } from '../../../src/store/sqlite/migrations.ts';
import { openSqliteStore } from '../../../src/store/sqlite/sqlite-store.ts';
import { freshNamespace, makeEvent } from '../conformance/helpers.ts';

const tempRoot = mkdtempSync(join(tmpdir(), 'tether-migrations-'));
after(() => rmSync(tempRoot, { recursive: true, force: true }));
const V1 = readFileSync(new URL('../../../src/store/sqlite/001-schema.sql', import.meta.url), 'utf8');

/** Inserts an events row as every schema version lays it out; returns its seq. */
function insertEventRow(db: Database.Database, row: ReturnType<typeof eventToRow>): number {
  const info = db
    .prepare(
      `INSERT INTO events (id, namespace, tenant, subject, predicate, value, value_key, retraction, kind, confidence,
         source, evidence, observed_at, recorded_at, actor_agent, actor_session, actor_key_id)
       VALUES (@id, @namespace, @tenant, @subject, @predicate, @value, @value_key, @retraction, @kind, @confidence,
         @source, @evidence, @observed_at, @recorded_at, @actor_agent, @actor_session, @actor_key_id)`,
    )
    .run(row);
  return Number(info.lastInsertRowid);
}

describe('SQLite schema migrations', () => {
  it('upgrades a version-1 database in place and keeps its data', async () => {
    // The events of a current store, laid out as version 1 stored them (FTS rows written with each event).
    const ns = freshNamespace();
    const e = makeEvent(ns, { value: 'kept across the upgrade' });
    const source = openSqliteStore({ dataDir: ':memory:' });
    await source.appendEvents([e]);
    const [row] = (await source.exportEvents({ namespace: ns, limit: 10 })).map(eventToRow);
    await source.close();

    const dir = join(tempRoot, 'v1');
    mkdirSync(dir);
    const v1 = new Database(join(dir, 'tether.db'));
    v1.pragma('journal_mode = WAL');
    v1.exec(V1);
    const seq = insertEventRow(v1, row as ReturnType<typeof eventToRow>);
    v1.prepare('INSERT INTO events_fts (rowid, body) VALUES (?, ?)').run(seq, ftsBody(e));
    v1.prepare(
      `INSERT INTO beliefs (event_id, namespace, subject, predicate, value_key, observed_at, replaced)
       VALUES (?, ?, ?, ?, ?, ?, '[]')`,
    ).run(e.id, ns, e.subject, e.predicate, e.valueKey, e.observedAt);
    assert.equal(v1.pragma('user_version', { simple: true }), 0);
    v1.close();

    const upgraded = openSqliteStore({ dataDir: dir });
    try {
      assert.deepEqual(
        (await upgraded.currentBeliefs({ namespace: ns, limit: 10 })).map((b) => b.event.id),
        [e.id],
      );
      assert.deepEqual(
        (await upgraded.searchEvents(ns, ['upgrade'], 10)).map((h) => h.eventId),
        [e.id],
      );
      // Written after the upgrade: the new layout takes the change.
      const next = makeEvent(ns, { value: 'after the upgrade' });
      await upgraded.appendEvents(
        [next],
        [{ namespace: ns, subject: e.subject, predicate: e.predicate, current: [{ eventId: next.id, replaced: [] }] }],
      );
      assert.deepEqual(
        (await upgraded.currentBeliefs({ namespace: ns, limit: 10 })).map((b) => b.event.id),
        [next.id],
      );
    } finally {
      await upgraded.close();
    }
    const db = new Database(join(dir, 'tether.db'), { readonly: true });
    try {
      assert.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
      const indexes = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'beliefs'")
        .pluck()
        .all();
      assert.deepEqual(indexes, [], 'the clustered primary key only (006 added beliefs_value, 009 took it out)');
      const pk = (db.prepare('PRAGMA table_info(beliefs)').all() as { name: string; pk: number }[])
        .filter((c) => c.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((c) => c.name);
      assert.deepEqual(pk, ['namespace', 'subject', 'predicate', 'observed_at', 'event_id']);
    } finally {
      db.close();
    }
  });

  it('keeps the 10 newest replaced values of a belief stored by version 3', async () => {
    const ns = freshNamespace();
    const long = makeEvent(ns, { subject: 'alice', value: 'now' });
    const short = makeEvent(ns, { subject: 'bob', value: 'now' });
    const replaced = (n: number) => Array.from({ length: n }, (_, i) => ({ value: `v${n - i}`, observedAt: n - i }));
    const dir = join(tempRoot, 'v3');
    mkdirSync(dir);
    const v3 = new Database(join(dir, 'tether.db'));
    v3.pragma('journal_mode = WAL');
    for (const file of ['001-schema.sql', '002-beliefs-covering.sql', '003-beliefs-clustered.sql']) {
      v3.exec(readFileSync(new URL(`../../../src/store/sqlite/${file}`, import.meta.url), 'utf8'));
    }
    v3.pragma('user_version = 3');
    for (const [e, n] of [
      [long, 15],
      [short, 3],
    ] as const) {
      insertEventRow(v3, eventToRow(e));
      v3.prepare(
        `INSERT INTO beliefs (namespace, subject, predicate, observed_at, event_id, value_key, replaced)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ).run(ns, e.subject, e.predicate, e.observedAt, e.id, e.valueKey, JSON.stringify(replaced(n)));
    }
    v3.close();

    const upgraded = openSqliteStore({ dataDir: dir });
    try {
      const beliefs = await upgraded.currentBeliefs({ namespace: ns, limit: 10 });
      assert.deepEqual(
        beliefs.map((b) => [b.event.subject, b.replaced]),
        [
          ['alice', replaced(15).slice(0, 10)],
          ['bob', replaced(3)],
        ],
      );
    } finally {
      await upgraded.close();
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
    // The refused store closed its connection (the last one to close removes the WAL) and started no worker.
    assert.equal(existsSync(join(dir, 'tether.db-wal')), false);
  });
});
