/**
 * @module
 * The embedded `Store`: better-sqlite3 12 in WAL mode with an FTS5 index. Zero set-up: one file
 * `tether.db` in the data folder. Purge erases for good (secure_delete, FTS secure-delete +
 * optimize, WAL checkpoint). Holds no memory semantics; picked by the CLI.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type {
  ExportQuery,
  FactKey,
  FactQuery,
  KeyRecord,
  RegistryVersion,
  SearchHit,
  Store,
  StoredEvent,
} from '../store.ts';
import { type EventRow, eventToRow, type KeyRow, keyFromRow, rowToEvent } from './rows.ts';

const SCHEMA = readFileSync(new URL('./001-schema.sql', import.meta.url), 'utf8');

/** Options for `openSqliteStore`. */
export interface SqliteStoreOptions {
  /** Folder holding `tether.db`; created if missing. `:memory:` keeps everything in memory. */
  dataDir: string;
}

/** Opens (and migrates) the SQLite store. */
export function openSqliteStore(options: SqliteStoreOptions): SqliteStore {
  return new SqliteStore(options);
}

/** Opaque FTS token for a namespace: searches match it with AND so they never cross namespaces. */
function nsToken(namespace: string): string {
  return `n${createHash('sha256').update(namespace).digest('hex').slice(0, 20)}`;
}

function ftsBody(e: StoredEvent): string {
  const value = e.value === null || e.value === undefined ? '' : String(e.value);
  return [e.subject, e.predicate, value, e.evidence ?? ''].join(' ');
}

/** better-sqlite3 driver. */
export class SqliteStore implements Store {
  readonly kind = 'sqlite';
  readonly path: string;
  readonly #db: Database.Database;
  #closed = false;
  readonly #insertEvent: Database.Statement;
  readonly #insertFts: Database.Statement;
  readonly #appendTx: (events: StoredEvent[]) => void;
  readonly #importTx: (events: StoredEvent[]) => number;

  constructor(options: SqliteStoreOptions) {
    if (options.dataDir === ':memory:') {
      this.path = ':memory:';
    } else {
      mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
      this.path = join(options.dataDir, 'tether.db');
    }
    const db = new Database(this.path);
    this.#db = db;
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    // Freed pages are zeroed, so a purge leaves no bytes of erased facts in the file.
    db.pragma('secure_delete = ON');
    db.pragma('busy_timeout = 5000');
    db.pragma('cache_size = -65536');
    db.exec(SCHEMA);
    db.prepare("INSERT INTO events_fts (events_fts, rank) VALUES ('secure-delete', 1)").run();

    this.#insertEvent = db.prepare(
      `INSERT INTO events (id, namespace, tenant, subject, predicate, value, value_key, retraction, kind,
         confidence, source, evidence, observed_at, recorded_at, actor_agent, actor_session, actor_key_id)
       VALUES (@id, @namespace, @tenant, @subject, @predicate, @value, @value_key, @retraction, @kind,
         @confidence, @source, @evidence, @observed_at, @recorded_at, @actor_agent, @actor_session, @actor_key_id)`,
    );
    this.#insertFts = db.prepare('INSERT INTO events_fts (rowid, ns, body) VALUES (?, ?, ?)');
    const existsStmt = db.prepare('SELECT 1 FROM events WHERE id = ?').pluck();
    const insertOne = (e: StoredEvent): void => {
      const info = this.#insertEvent.run(eventToRow(e));
      this.#insertFts.run(info.lastInsertRowid, nsToken(e.namespace), ftsBody(e));
    };
    this.#appendTx = db.transaction((events: StoredEvent[]) => {
      for (const e of events) insertOne(e);
    });
    this.#importTx = db.transaction((events: StoredEvent[]) => {
      let n = 0;
      for (const e of events) {
        if (existsStmt.get(e.id)) continue;
        insertOne(e);
        n++;
      }
      return n;
    });
  }

  async appendEvents(events: StoredEvent[]): Promise<void> {
    this.#appendTx(events);
  }

  async importEvents(events: StoredEvent[]): Promise<number> {
    return this.#importTx(events);
  }

  async factEvents(query: FactQuery): Promise<StoredEvent[]> {
    const where = ['namespace = ?'];
    const args: unknown[] = [query.namespace];
    if (query.subject !== undefined) {
      where.push('subject = ?');
      args.push(query.subject);
    }
    if (query.predicate !== undefined) {
      where.push('predicate = ?');
      args.push(query.predicate);
    }
    if (query.subject !== undefined && query.predicate !== undefined) {
      return this.#selectEvents(`${where.join(' AND ')}`, args);
    }
    const groups = this.#db
      .prepare(
        `SELECT DISTINCT subject, predicate FROM events WHERE ${where.join(' AND ')} ORDER BY subject, predicate LIMIT ?`,
      )
      .all(...args, query.maxGroups) as FactKey[];
    return this.groupEvents(query.namespace, groups);
  }

  async groupEvents(namespace: string, groups: FactKey[]): Promise<StoredEvent[]> {
    const stmt = this.#db.prepare(
      'SELECT * FROM events WHERE namespace = ? AND subject = ? AND predicate = ? ORDER BY seq',
    );
    const out: StoredEvent[] = [];
    for (const g of groups) {
      for (const row of stmt.all(namespace, g.subject, g.predicate) as EventRow[]) out.push(rowToEvent(row));
    }
    return out;
  }

  #selectEvents(where: string, args: unknown[]): StoredEvent[] {
    const rows = this.#db.prepare(`SELECT * FROM events WHERE ${where} ORDER BY seq`).all(...args) as EventRow[];
    return rows.map(rowToEvent);
  }

  async searchEvents(namespace: string, terms: string[], limit: number): Promise<SearchHit[]> {
    if (terms.length === 0) return [];
    const quoted = terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(' AND ');
    const match = `ns:${nsToken(namespace)} AND body:(${quoted})`;
    const rows = this.#db
      .prepare(
        `SELECT e.id AS eventId, e.subject AS subject, e.predicate AS predicate
         FROM (SELECT rowid, rank FROM events_fts WHERE events_fts MATCH ? ORDER BY rank LIMIT ?) f
         JOIN events e ON e.seq = f.rowid
         WHERE e.namespace = ?
         ORDER BY f.rank`,
      )
      .all(match, limit, namespace) as SearchHit[];
    return rows;
  }

  async exportEvents(query: ExportQuery): Promise<StoredEvent[]> {
    const where: string[] = [];
    const args: unknown[] = [];
    if (query.namespace !== undefined) {
      where.push('namespace = ?');
      args.push(query.namespace);
    }
    if (query.tenant !== undefined) {
      where.push('tenant = ?');
      args.push(query.tenant);
    }
    if (query.since !== undefined) {
      where.push('id > ?');
      args.push(query.since);
    }
    const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
    const rows = this.#db
      .prepare(`SELECT * FROM events ${clause} ORDER BY id LIMIT ?`)
      .all(...args, query.limit) as EventRow[];
    return rows.map(rowToEvent);
  }

  async purgeNamespace(namespace: string): Promise<number> {
    const db = this.#db;
    const seqs = db.prepare('SELECT seq FROM events WHERE namespace = ?').pluck().all(namespace) as number[];
    const delFts = db.prepare('DELETE FROM events_fts WHERE rowid = ?');
    db.transaction(() => {
      for (const seq of seqs) delFts.run(seq);
      db.prepare('DELETE FROM events WHERE namespace = ?').run(namespace);
    })();
    // Merge FTS segments so no index page still holds the erased terms. secure_delete zeroes freed
    // cells, but a b-tree page that is rebuilt can keep old bytes in its unused space, so VACUUM
    // rewrites the whole file; then the WAL is folded back and truncated. Afterwards no file under
    // the data folder holds those bytes. VACUUM costs time proportional to the database: purge is rare.
    db.prepare("INSERT INTO events_fts (events_fts) VALUES ('optimize')").run();
    if (this.path !== ':memory:') {
      db.exec('VACUUM');
      db.pragma('wal_checkpoint(TRUNCATE)');
    }
    return seqs.length;
  }

  async registryVersions(tenant: string): Promise<RegistryVersion[]> {
    const rows = this.#db
      .prepare(
        'SELECT id, tenant, recorded_at, predicates FROM registry_versions WHERE tenant = ? ORDER BY recorded_at, id',
      )
      .all(tenant) as { id: string; tenant: string; recorded_at: number; predicates: string }[];
    return rows.map((r) => ({
      id: r.id,
      tenant: r.tenant,
      recordedAt: r.recorded_at,
      predicates: JSON.parse(r.predicates),
    }));
  }

  async appendRegistryVersion(version: RegistryVersion): Promise<void> {
    this.#db
      .prepare('INSERT INTO registry_versions (id, tenant, recorded_at, predicates) VALUES (?, ?, ?, ?)')
      .run(version.id, version.tenant, version.recordedAt, JSON.stringify(version.predicates));
  }

  async insertKey(key: KeyRecord): Promise<void> {
    this.#db
      .prepare(
        `INSERT INTO keys (id, hash, tenant, agent, session, admin, note, created_at, expires_at, revoked_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        key.id,
        key.hash,
        key.tenant,
        key.agent,
        key.session,
        key.admin ? 1 : 0,
        key.note,
        key.createdAt,
        key.expiresAt,
        key.revokedAt,
      );
  }

  async getKey(id: string): Promise<KeyRecord | null> {
    const row = this.#db.prepare('SELECT * FROM keys WHERE id = ?').get(id) as KeyRow | undefined;
    return row ? keyFromRow(row) : null;
  }

  async listKeys(tenant: string): Promise<KeyRecord[]> {
    const rows = (
      tenant === '*'
        ? this.#db.prepare('SELECT * FROM keys ORDER BY created_at, id').all()
        : this.#db.prepare('SELECT * FROM keys WHERE tenant = ? ORDER BY created_at, id').all(tenant)
    ) as KeyRow[];
    return rows.map(keyFromRow);
  }

  async revokeKey(id: string, at: number): Promise<boolean> {
    const info = this.#db.prepare('UPDATE keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?').run(at, id);
    return info.changes > 0;
  }

  async countEvents(): Promise<number> {
    return this.#db.prepare('SELECT count(*) FROM events').pluck().get() as number;
  }

  async ping(): Promise<void> {
    if (this.#closed) throw new Error('store is closed');
    this.#db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.path !== ':memory:') this.#db.pragma('wal_checkpoint(TRUNCATE)');
    this.#db.close();
  }
}
