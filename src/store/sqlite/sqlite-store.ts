/**
 * @module
 * The embedded `Store`: better-sqlite3 12 in WAL mode with an FTS5 index and a "now" projection of
 * beliefs. Zero set-up: one file `tether.db` in the data folder. Purge erases for good (secure_delete,
 * FTS optimize, VACUUM, WAL checkpoint). Holds no memory semantics; picked by the CLI.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ensurePrivateDir, ensurePrivateFile, restrictIfExists } from '../../common/private-files.ts';
import type {
  Fence,
  Fenced,
  LeaseAcquire,
  LeaseRecord,
  MilestoneRecord,
  OutputInfo,
  OutputRecord,
  PointerRecord,
  ResumeExportQuery,
  ResumeRecordLine,
  ResumeWrite,
  ResumeWriteResult,
  TurnQuery,
  TurnRecord,
  WorkingStateRecord,
} from '../resume-types.ts';
import type {
  BeliefChange,
  BeliefQuery,
  CurrentBelief,
  ExportQuery,
  FactHead,
  FactHeadRequest,
  FactKey,
  FactQuery,
  FactReader,
  FactWrite,
  FactWriteScope,
  KeyRecord,
  RegistryVersion,
  SearchHit,
  Store,
  StoredEvent,
} from '../store.ts';
import { beliefFilters } from './belief-filters.ts';
import { type Checkpointer, startCheckpointer } from './checkpointer.ts';
import { ftsBody, ftsMatch } from './fts.ts';
import { FtsQueue, type FtsSource } from './fts-queue.ts';
import { migrate } from './migrations.ts';
import { deleteNamespaceRows, vacuumInline } from './purge.ts';
import { SqliteResumeTables } from './resume-tables.ts';
import { type BeliefRow, type EventRow, eventToRow, type KeyRow, keyFromRow, rowToBelief, rowToEvent } from './rows.ts';

/** Options for `openSqliteStore`. */
export interface SqliteStoreOptions {
  /** Folder holding `tether.db`; created if missing. `:memory:` keeps everything in memory. */
  dataDir: string;
}

/** Opens (and migrates) the SQLite store. */
export function openSqliteStore(options: SqliteStoreOptions): SqliteStore {
  return new SqliteStore(options);
}

/** better-sqlite3 driver. */
export class SqliteStore implements Store {
  readonly kind = 'sqlite';
  readonly path: string;
  readonly #db: Database.Database;
  readonly #statements = new Map<string, Database.Statement>();
  #closed = false;
  #writeChain: Promise<void> = Promise.resolve();
  readonly #fts: FtsQueue;
  readonly #checkpointer: Checkpointer | null;
  readonly #appendTx: (events: StoredEvent[], changes: BeliefChange[]) => FtsSource[];
  readonly #importTx: (events: StoredEvent[]) => FtsSource[];
  readonly #beliefsTx: (changes: BeliefChange[]) => void;
  readonly #readTx: (requests: FactHeadRequest[]) => FactHead[];
  readonly #resume: SqliteResumeTables;
  /** Set while a purge's VACUUM runs on the checkpointer's thread: every write awaits it first. */
  #vacuuming: Promise<void> | null = null;
  /** Purges that rewrote the file (an empty namespace's purge does not). */
  readonly purgeStats = { vacuums: 0 };

  constructor(options: SqliteStoreOptions) {
    if (options.dataDir === ':memory:') {
      this.path = ':memory:';
    } else {
      ensurePrivateDir(options.dataDir);
      this.path = join(options.dataDir, 'tether.db');
      // SQLite creates the -wal and -shm files with the database file's mode: 0600 here makes them
      // 0600 too; ones left by an older version are narrowed as well.
      ensurePrivateFile(this.path);
      for (const suffix of ['-wal', '-shm']) restrictIfExists(this.path + suffix);
    }
    const db = new Database(this.path);
    this.#db = db;
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    // Freed pages are zeroed, so a purge leaves no bytes of erased facts in the file.
    db.pragma('secure_delete = ON');
    db.pragma('busy_timeout = 5000');
    // 16 MiB: the b-tree interior pages at 10^6 events (~7 MiB) and the hottest leaves. A larger cache
    // costs every commit that rebalanced a b-tree while the file is under 1 GiB: balance_nonroot swaps
    // page numbers through the lock-byte page (page 262145 at 4 KiB), and the pager's end-of-transaction
    // truncate of the page cache then walks the whole cache. At 64 MiB that walk took 9% of the writer's
    // CPU; 16 MiB gave about 20% more remembers/s over HTTP at 10^6 events (wrk, 8 connections).
    db.pragma('cache_size = -16384');
    // Checkpoints run on a worker thread (checkpointer.ts), so none inline; in memory there is no WAL.
    db.pragma('wal_autocheckpoint = 0');
    try {
      migrate(db);
      db.prepare("INSERT INTO events_fts (events_fts, rank) VALUES ('secure-delete', 1)").run();
      this.#fts = new FtsQueue(db);
      this.#indexUnindexed();
    } catch (err) {
      db.close(); // a store that failed to open holds no connection (nor worker: none started yet)
      throw err;
    }
    this.#checkpointer = this.path === ':memory:' ? null : startCheckpointer(db, this.path);
    this.#resume = new SqliteResumeTables(db, (text) => this.#sql(text));

    // Returns the event's FTS row, queued by the caller once the transaction has committed.
    const insertOne = (e: StoredEvent): FtsSource => {
      const info = this.#sql(
        `INSERT INTO events (id, namespace, tenant, subject, predicate, value, value_key, retraction, kind,
           confidence, source, evidence, observed_at, recorded_at, actor_agent, actor_session, actor_key_id)
         VALUES (@id, @namespace, @tenant, @subject, @predicate, @value, @value_key, @retraction, @kind,
           @confidence, @source, @evidence, @observed_at, @recorded_at, @actor_agent, @actor_session, @actor_key_id)`,
      ).run(eventToRow(e));
      return { seq: Number(info.lastInsertRowid), body: ftsBody(e) };
    };
    const applyChanges = (changes: BeliefChange[]): void => {
      const delFact = this.#sql('DELETE FROM beliefs WHERE namespace = ? AND subject = ? AND predicate = ?');
      // Within the fact's key range: the table is clustered by fact, not by event id.
      const delOne = this.#sql(
        'DELETE FROM beliefs WHERE namespace = ? AND subject = ? AND predicate = ? AND event_id = ?',
      );
      // value_key and observed_at come from the event row: a belief can only point at a stored event.
      const ins = this.#sql(
        `INSERT OR REPLACE INTO beliefs (event_id, namespace, subject, predicate, value_key, observed_at, replaced)
         SELECT id, ?, ?, ?, value_key, observed_at, ? FROM events WHERE id = ?`,
      );
      for (const c of changes) {
        if (c.current) delFact.run(c.namespace, c.subject, c.predicate);
        for (const id of c.remove ?? []) delOne.run(c.namespace, c.subject, c.predicate, id);
        for (const b of [...(c.current ?? []), ...(c.add ?? [])]) {
          ins.run(c.namespace, c.subject, c.predicate, JSON.stringify(b.replaced), b.eventId);
        }
      }
    };
    this.#appendTx = db.transaction((events: StoredEvent[], changes: BeliefChange[]) => {
      const rows = events.map(insertOne);
      applyChanges(changes);
      return rows;
    });
    this.#beliefsTx = db.transaction(applyChanges);
    this.#readTx = db.transaction((requests: FactHeadRequest[]) => requests.map((r) => this.#factHead(r)));
    this.#importTx = db.transaction((events: StoredEvent[]) => {
      const exists = this.#sql('SELECT 1 FROM events WHERE id = ?').pluck();
      const rows: FtsSource[] = [];
      for (const e of events) if (!exists.get(e.id)) rows.push(insertOne(e));
      return rows;
    });
  }

  /** A cached prepared statement. */
  #sql(text: string): Database.Statement {
    let s = this.#statements.get(text);
    if (!s) {
      s = this.#db.prepare(text);
      this.#statements.set(text, s);
    }
    return s;
  }

  /** Indexes events stored after the FTS mark: queued rows a stopped process never flushed. */
  #indexUnindexed(): void {
    const stmt = this.#db.prepare('SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT 4096');
    for (let after = this.#fts.mark; ; ) {
      const rows = stmt.all(after) as (EventRow & { seq: number })[];
      if (rows.length === 0) return;
      this.#fts.addAll(rows.map((r) => ({ seq: r.seq, body: ftsBody(rowToEvent(r)) })));
      this.#fts.flush();
      after = (rows[rows.length - 1] as { seq: number }).seq;
    }
  }

  async appendEvents(events: StoredEvent[], changes: BeliefChange[] = []): Promise<void> {
    while (this.#vacuuming) await this.#vacuuming;
    this.#fts.addAll(this.#appendTx(events, changes));
    this.#checkpointer?.noteWrite();
  }

  async writeFacts<T>(
    scope: FactWriteScope,
    plan: (heads: FactHead[], tx: FactReader) => Promise<FactWrite<T>>,
  ): Promise<T> {
    // The single-writer fast path: one process per data folder (data-lock.ts), and in it these
    // operations one after another (the writer queue already sends them so: the chain never waits
    // there), so no other write comes between this read and the append. No lock is taken.
    const run = this.#writeChain.then(async () => {
      const w = await plan(this.#readTx(scope.heads), this);
      if (w.events.length > 0 || w.changes.length > 0) await this.appendEvents(w.events, w.changes);
      return w.result;
    });
    this.#writeChain = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  async replaceBeliefs(changes: BeliefChange[]): Promise<void> {
    while (this.#vacuuming) await this.#vacuuming;
    this.#beliefsTx(changes);
    this.#checkpointer?.noteWrite();
  }

  async existingEventIds(ids: string[]): Promise<Set<string>> {
    const stmt = this.#sql('SELECT 1 FROM events WHERE id = ?').pluck();
    return new Set(ids.filter((id) => stmt.get(id) !== undefined));
  }

  async importEvents(events: StoredEvent[]): Promise<number> {
    while (this.#vacuuming) await this.#vacuuming;
    const rows = this.#importTx(events);
    this.#fts.addAll(rows);
    this.#checkpointer?.noteWrite();
    return rows.length;
  }

  async currentBeliefs(q: BeliefQuery): Promise<CurrentBelief[]> {
    const { where, args } = beliefFilters(q);
    const rows = this.#sql(
      `SELECT e.*, b.replaced AS belief_replaced FROM beliefs b JOIN events e ON e.id = b.event_id
       WHERE ${where.join(' AND ')} ORDER BY b.subject, b.predicate, b.observed_at, b.event_id LIMIT ?`,
    ).all(...args, q.limit) as BeliefRow[];
    return rows.map(rowToBelief);
  }

  async searchBeliefs(q: BeliefQuery & { terms: string[] }): Promise<CurrentBelief[]> {
    if (q.terms.length === 0) return [];
    this.#fts.flush();
    const { where, args } = beliefFilters(q);
    // Newest matching events first, streamed from the index and stopped at the limit: the cost no
    // longer grows with how common a word is (ranking every match did).
    const rows = this.#sql(
      `SELECT e.*, b.replaced AS belief_replaced FROM events_fts f
       JOIN events e ON e.seq = f.rowid
       JOIN beliefs b ON b.namespace = e.namespace AND b.subject = e.subject AND b.predicate = e.predicate
         AND b.observed_at = e.observed_at AND b.event_id = e.id
       WHERE events_fts MATCH ? AND ${where.join(' AND ')} ORDER BY f.rowid DESC LIMIT ?`,
    ).all(ftsMatch(q.namespace, q.terms), ...args, q.limit) as BeliefRow[];
    return rows.map(rowToBelief);
  }

  async factHead(namespace: string, subject: string, predicate: string, valueKey?: string): Promise<FactHead> {
    return this.#factHead({ namespace, subject, predicate, valueKey });
  }

  async factHeads(requests: FactHeadRequest[]): Promise<FactHead[]> {
    // One read transaction: statements outside a transaction each take and drop the WAL read lock.
    return this.#readTx(requests);
  }

  #factHead({ namespace, subject, predicate, valueKey }: FactHeadRequest): FactHead {
    // One range of the clustered table, in its own order; value_key (not indexed) is tested per row.
    const key = valueKey ?? null;
    const rows = this.#sql(
      `SELECT e.*, b.replaced AS belief_replaced FROM beliefs b JOIN events e ON e.id = b.event_id
       WHERE b.namespace = ? AND b.subject = ? AND b.predicate = ? AND (? IS NULL OR b.value_key = ?)
       ORDER BY b.observed_at, b.event_id`,
    ).all(namespace, subject, predicate, key, key);
    const last = this.#sql('SELECT max(observed_at) FROM events WHERE namespace = ? AND subject = ? AND predicate = ?')
      .pluck()
      .get(namespace, subject, predicate) as number | null;
    return { beliefs: (rows as BeliefRow[]).map(rowToBelief), lastObservedAt: last };
  }

  async factKeys(tenant: string, predicate: string): Promise<{ namespace: string; subject: string }[]> {
    return this.#sql('SELECT DISTINCT namespace, subject FROM events WHERE tenant = ? AND predicate = ?').all(
      tenant,
      predicate,
    ) as { namespace: string; subject: string }[];
  }

  async factEvents(query: FactQuery): Promise<StoredEvent[]> {
    if (query.subject !== undefined && query.predicate !== undefined) {
      return this.groupEvents(query.namespace, [{ subject: query.subject, predicate: query.predicate }]);
    }
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
    const groups = this.#sql(
      `SELECT DISTINCT subject, predicate FROM events WHERE ${where.join(' AND ')} ORDER BY subject, predicate LIMIT ?`,
    ).all(...args, query.maxGroups) as FactKey[];
    return this.groupEvents(query.namespace, groups);
  }

  async groupEvents(namespace: string, groups: FactKey[]): Promise<StoredEvent[]> {
    const stmt = this.#sql('SELECT * FROM events WHERE namespace = ? AND subject = ? AND predicate = ? ORDER BY seq');
    const out: StoredEvent[] = [];
    for (const g of groups) {
      for (const row of stmt.all(namespace, g.subject, g.predicate) as EventRow[]) out.push(rowToEvent(row));
    }
    return out;
  }

  async searchEvents(namespace: string, terms: string[], limit: number): Promise<SearchHit[]> {
    if (terms.length === 0) return [];
    this.#fts.flush();
    return this.#sql(
      `SELECT e.id AS eventId, e.subject AS subject, e.predicate AS predicate
       FROM events_fts f JOIN events e ON e.seq = f.rowid
       WHERE events_fts MATCH ? AND e.namespace = ? ORDER BY f.rowid DESC LIMIT ?`,
    ).all(ftsMatch(namespace, terms), namespace, limit) as SearchHit[];
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
    const rows = this.#sql(`SELECT * FROM events ${clause} ORDER BY id LIMIT ?`).all(
      ...args,
      query.limit,
    ) as EventRow[];
    return rows.map(rowToEvent);
  }

  async purgeNamespace(namespace: string): Promise<number> {
    while (this.#vacuuming) await this.#vacuuming;
    // The TRUNCATE checkpoint at the end needs the checkpoint lock: no background checkpoint meanwhile.
    const resume = await this.#checkpointer?.pause();
    try {
      this.#fts.flush();
      const { events, touched } = await deleteNamespaceRows(
        {
          db: this.#db,
          sql: (text) => this.#sql(text),
          resetFtsMark: (seq) => {
            this.#fts.flush();
            this.#fts.resetMark(seq);
          },
          purgeResume: (ns) => this.#resume.purge(ns),
        },
        namespace,
      );
      // Nothing erased, nothing to rewrite: an empty namespace's purge costs a few index lookups.
      if (!touched) return 0;
      // Merge FTS segments so no index page still holds the erased terms. secure_delete zeroes freed
      // cells, but a b-tree page that is rebuilt can keep old bytes in its unused space, so VACUUM
      // rewrites the whole file; then the WAL is folded back and truncated. Afterwards no file under
      // the data folder holds those bytes. That costs time proportional to the database, so it runs
      // on the checkpointer's thread while this store holds its writes (purge.ts).
      this.purgeStats.vacuums++;
      if (this.#checkpointer?.running) {
        this.#fts.flush();
        let done = () => {};
        this.#vacuuming = new Promise<void>((resolve) => {
          done = resolve;
        });
        try {
          await this.#checkpointer.vacuum();
        } finally {
          this.#vacuuming = null;
          done();
        }
      } else {
        vacuumInline(this.#db, this.path !== ':memory:');
      }
      return events;
    } finally {
      resume?.();
    }
  }

  /** True while a purge's VACUUM runs on the worker thread (this store's writes wait meanwhile). */
  get vacuuming(): boolean {
    return this.#vacuuming !== null;
  }

  async registryVersions(tenant: string): Promise<RegistryVersion[]> {
    const rows = this.#sql(
      'SELECT id, tenant, recorded_at, predicates FROM registry_versions WHERE tenant = ? ORDER BY recorded_at, id',
    ).all(tenant) as { id: string; tenant: string; recorded_at: number; predicates: string }[];
    return rows.map((r) => ({
      id: r.id,
      tenant: r.tenant,
      recordedAt: r.recorded_at,
      predicates: JSON.parse(r.predicates),
    }));
  }

  async appendRegistryVersion(version: RegistryVersion): Promise<void> {
    while (this.#vacuuming) await this.#vacuuming;
    this.#sql('INSERT INTO registry_versions (id, tenant, recorded_at, predicates) VALUES (?, ?, ?, ?)').run(
      version.id,
      version.tenant,
      version.recordedAt,
      JSON.stringify(version.predicates),
    );
  }

  async insertKey(key: KeyRecord): Promise<void> {
    while (this.#vacuuming) await this.#vacuuming;
    this.#sql(
      `INSERT INTO keys (id, hash, tenant, agent, session, admin, note, created_at, expires_at, revoked_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
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
    const row = this.#sql('SELECT * FROM keys WHERE id = ?').get(id) as KeyRow | undefined;
    return row ? keyFromRow(row) : null;
  }

  async listKeys(tenant: string): Promise<KeyRecord[]> {
    const rows = (
      tenant === '*'
        ? this.#sql('SELECT * FROM keys ORDER BY created_at, id').all()
        : this.#sql('SELECT * FROM keys WHERE tenant = ? ORDER BY created_at, id').all(tenant)
    ) as KeyRow[];
    return rows.map(keyFromRow);
  }

  async deleteExpiredKeys(before: number): Promise<number> {
    while (this.#vacuuming) await this.#vacuuming;
    return this.#sql('DELETE FROM keys WHERE expires_at IS NOT NULL AND expires_at < ?').run(before).changes;
  }

  async revokeKey(id: string, at: number): Promise<boolean> {
    while (this.#vacuuming) await this.#vacuuming;
    return this.#sql('UPDATE keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?').run(at, id).changes > 0;
  }

  // Leases and resume records: resume-tables.ts. Writes note the checkpointer like event writes.
  async acquireLease(r: { namespace: string; holder: string; ttlMs: number; now: number }): Promise<LeaseAcquire> {
    while (this.#vacuuming) await this.#vacuuming;
    return this.#wrote(this.#resume.acquire(r));
  }
  async renewLease(fence: Fence, ttlMs: number): Promise<Fenced<LeaseRecord>> {
    while (this.#vacuuming) await this.#vacuuming;
    return this.#wrote(this.#resume.renew(fence, ttlMs));
  }
  async releaseLease(fence: Fence): Promise<Fenced<LeaseRecord>> {
    while (this.#vacuuming) await this.#vacuuming;
    return this.#wrote(this.#resume.release(fence));
  }
  async getLease(namespace: string): Promise<LeaseRecord | null> {
    return this.#resume.lease(namespace);
  }
  async writeResume(fence: Fence, writes: ResumeWrite[]): Promise<Fenced<ResumeWriteResult[]>> {
    while (this.#vacuuming) await this.#vacuuming;
    return this.#wrote(this.#resume.write(fence, writes));
  }
  async importResume(records: ResumeRecordLine[]): Promise<number> {
    while (this.#vacuuming) await this.#vacuuming;
    return this.#wrote(this.#resume.import(records));
  }
  async workingState(namespace: string): Promise<WorkingStateRecord | null> {
    return this.#resume.workingState(namespace);
  }
  async workingStateHistory(namespace: string, limit: number, beforeVersion?: number): Promise<WorkingStateRecord[]> {
    return this.#resume.workingStateHistory(namespace, limit, beforeVersion);
  }
  async milestones(namespace: string, limit: number): Promise<MilestoneRecord[]> {
    return this.#resume.milestones(namespace, limit);
  }
  async turns(query: TurnQuery): Promise<TurnRecord[]> {
    return this.#resume.turns(query);
  }
  async countTurns(namespace: string): Promise<number> {
    return this.#resume.countTurns(namespace);
  }
  async output(namespace: string, ref: string): Promise<OutputRecord | null> {
    return this.#resume.output(namespace, ref);
  }
  async outputs(namespace: string, limit: number): Promise<OutputInfo[]> {
    return this.#resume.outputs(namespace, limit);
  }
  async countOutputs(namespace: string): Promise<number> {
    return this.#resume.countOutputs(namespace);
  }
  async pointers(namespace: string): Promise<PointerRecord[]> {
    return this.#resume.pointers(namespace);
  }
  exportResume(query: ResumeExportQuery): AsyncIterable<ResumeRecordLine> {
    return this.#resume.export(query);
  }
  /** Tells the checkpointer a write happened, then gives `value` back. */
  #wrote<T>(value: T): T {
    this.#checkpointer?.noteWrite();
    return value;
  }

  async countEvents(namespace?: string): Promise<number> {
    if (namespace !== undefined) {
      return this.#sql('SELECT count(*) FROM events WHERE namespace = ?').pluck().get(namespace) as number;
    }
    return this.#sql('SELECT count(*) FROM events').pluck().get() as number;
  }

  async ping(): Promise<void> {
    if (this.#closed) throw new Error('store is closed');
    this.#sql('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#fts.flush(); // if it fails, the mark did not move: the next open indexes these rows
    } finally {
      await this.#checkpointer?.close();
      if (this.path !== ':memory:') this.#db.pragma('wal_checkpoint(TRUNCATE)');
      this.#db.close();
    }
  }
}
