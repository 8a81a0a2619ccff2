/**
 * @module
 * The baseline for bench:memory: the same reads and writes done directly on better-sqlite3, against a
 * copy of the Tether database file (same schema, same data, same pragmas as the SQLite store), with no
 * HTTP, no validation and no folding: what the hardware and SQLite give at best.
 */
import Database from 'better-sqlite3';
import { ftsBody, ftsMatch } from '../../src/store/sqlite/fts.ts';
import type { StoredEvent } from '../../src/store/store.ts';

/** One new row for `insert`. */
export interface RawRow {
  id: string;
  namespace: string;
  tenant: string;
  subject: string;
  predicate: string;
  value: string;
}

/** Raw better-sqlite3 access to a Tether database file. */
export class RawSqlite {
  readonly #db: Database.Database;
  readonly #point: Database.Statement;
  readonly #search: Database.Statement;
  readonly #insertEvent: Database.Statement;
  readonly #insertFts: Database.Statement;
  readonly #insertTx: (r: RawRow, now: number) => void;

  constructor(path: string) {
    const db = new Database(path);
    this.#db = db;
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    db.pragma('cache_size = -65536');
    // One (namespace, subject, predicate) group by the events_fact index.
    this.#point = db.prepare('SELECT * FROM events WHERE namespace = ? AND subject = ? AND predicate = ? ORDER BY seq');
    // The newest 50 matches within the namespace (same index and tokens as the store), joined to their rows.
    this.#search = db.prepare(
      `SELECT e.* FROM events_fts f JOIN events e ON e.seq = f.rowid
       WHERE events_fts MATCH ? ORDER BY f.rowid DESC LIMIT 50`,
    );
    this.#insertEvent = db.prepare(
      `INSERT INTO events (id, namespace, tenant, subject, predicate, value, value_key, retraction, kind,
         confidence, source, evidence, observed_at, recorded_at, actor_agent, actor_session, actor_key_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, 0, NULL, 1, NULL, NULL, ?, ?, NULL, NULL, NULL)`,
    );
    this.#insertFts = db.prepare('INSERT INTO events_fts (rowid, body) VALUES (?, ?)');
    this.#insertTx = db.transaction((r: RawRow, now: number) => {
      const info = this.#insertEvent.run(
        r.id,
        r.namespace,
        r.tenant,
        r.subject,
        r.predicate,
        JSON.stringify(r.value),
        r.value.toLowerCase(),
        now,
        now,
      );
      this.#insertFts.run(
        info.lastInsertRowid,
        ftsBody({
          namespace: r.namespace,
          subject: r.subject,
          predicate: r.predicate,
          value: r.value,
          evidence: null,
        } as StoredEvent),
      );
    });
  }

  /** Rows of one fact group. */
  pointRead(namespace: string, subject: string, predicate: string): unknown[] {
    return this.#point.all(namespace, subject, predicate);
  }

  /** The newest 50 rows matching all `terms` in `namespace`. */
  search(namespace: string, terms: string[]): unknown[] {
    return this.#search.all(ftsMatch(namespace, terms));
  }

  /** One event row and its FTS entry, in their own transaction (what one stored remember writes). */
  insert(row: RawRow): void {
    this.#insertTx(row, Date.now());
  }

  close(): void {
    this.#db.close();
  }
}
