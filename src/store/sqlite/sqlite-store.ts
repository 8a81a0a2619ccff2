/**
 * @module
 * The embedded `Store`: better-sqlite3 12 in WAL mode with an FTS5 index and a "now" projection of
 * beliefs. Zero set-up: one file `tether.db` in the data folder. Purge erases for good in short steps
 * (`purge-runner.ts`). Holds no memory semantics; picked by the CLI. The connection is opened by
 * connection.ts; event writes, keys/registry and resume records have their statements apart.
 */
import type Database from 'better-sqlite3';
import type { RenderedReads } from '../answer-text-port.ts';
import { type EventRow, rowToEvent } from '../event-rows.ts';
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
  SearchHit,
  StoredEvent,
} from '../fact-store.ts';
import type { KeyStore } from '../key-store.ts';
import type { LeaseStore } from '../lease-store.ts';
import type { OffLoopFolds } from '../log-fold-port.ts';
import type { FactGroupQuery, FactLogQuery, LogCountQuery } from '../log-reads.ts';
import type { RegistryStore } from '../registry-store.ts';
import type { ResumeStore } from '../resume-store.ts';
import type { Store } from '../store.ts';
import { conditions } from './belief-filters.ts';
import { type Checkpointer, startCheckpointer } from './checkpointer.ts';
import { openConnection } from './connection.ts';
import { applyBeliefChanges, insertEvent } from './event-writes.ts';
import { readFactEvents, readFactHead, readFactKeys, readGroupEvents, type Sql } from './fact-reads.ts';
import { ftsBody } from './fts.ts';
import { FtsQueue, type FtsSource } from './fts-queue.ts';
import { SqliteKeyRegistryTables } from './key-registry-tables.ts';
import { migrate } from './migrations.ts';
import type { PurgeProgress } from './purge.ts';
import { PurgeRunner } from './purge-runner.ts';
import { ReadPool, type WorkerThreadInfo } from './read-pool.ts';
import { type ReadOp, SqliteReads } from './read-queries.ts';
import { SqliteResumeTables } from './resume-tables.ts';
import { leftoverRebuilds } from './table-rebuild.ts';

/** Options for `openSqliteStore`. */
export interface SqliteStoreOptions {
  /** Folder holding `tether.db`; created if missing. `:memory:` keeps everything in memory. */
  dataDir: string;
  /**
   * Worker threads for heavy reads (search, as_of log pages, history, export), each with its own
   * read-only connection (`read-pool.ts`); 0 reads inline. In memory there is no file to share: inline.
   * @default 2
   */
  readWorkers?: number;
  /**
   * URL of the memory engine's fold module (`memory/log-fold.ts`'s `LOG_FOLD_MODULE`, handed over by the
   * CLI's driver table): with it the read workers run whole `as_of` folds (`offLoopFolds`); without, the
   * engine folds page by page on the loop.
   */
  foldModule?: string;
  /**
   * URL of the server's answer module (`server/answer-text.ts`'s `ANSWER_TEXT_MODULE`, from the driver
   * table): with it the read workers build heavy answers as JSON bytes (`renderedReads`).
   */
  answerModule?: string;
}

/** Opens (and migrates) the SQLite store. */
export function openSqliteStore(options: SqliteStoreOptions): SqliteStore {
  return new SqliteStore(options);
}

/** better-sqlite3 driver. */
export class SqliteStore implements Store {
  readonly kind = 'sqlite';
  readonly exportOrder = 'id';
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
  /** `#sql` as a function, for the reads in fact-reads.ts. */
  readonly #sqlOf: Sql = (text) => this.#sql(text);
  readonly #resume: SqliteResumeTables;
  readonly #keys: SqliteKeyRegistryTables;
  /** Heavy reads on this connection (in memory, or when no worker runs). */
  readonly #reads: SqliteReads;
  readonly #pool: ReadPool | null;
  /**
   * The pool's read interfaces, made at their first use: every recall, search, history page and export
   * asks for them, and each call made a flush closure and an object of closures.
   */
  #offLoop: OffLoopFolds | null = null;
  #rendered: RenderedReads | null = null;
  readonly #flushFts = (): void => this.#fts.flush();
  readonly #foldModule: string | null;
  /** Purges, one at a time, in short steps (purge-runner.ts); holds writes during its last one. */
  readonly #purges: PurgeRunner;

  constructor(options: SqliteStoreOptions) {
    const { db, path } = openConnection(options.dataDir);
    let unfinished: string[] = [];
    this.path = path;
    this.#db = db;
    try {
      migrate(db);
      unfinished = leftoverRebuilds(db);
      db.prepare("INSERT INTO events_fts (events_fts, rank) VALUES ('secure-delete', 1)").run();
      // Merge steps wait, as writes do, while a purge's WAL cut or truncate runs (`#purges` is set below).
      this.#fts = new FtsQueue(db, { held: () => this.#purges?.held ?? null });
      this.#indexUnindexed();
    } catch (err) {
      db.close(); // a store that failed to open holds no connection (nor worker: none started yet)
      throw err;
    }
    this.#checkpointer = this.path === ':memory:' ? null : startCheckpointer(db, this.path);
    this.#reads = new SqliteReads(db);
    const workers = options.readWorkers ?? 2;
    this.#foldModule = options.foldModule ?? null;
    this.#pool =
      this.path === ':memory:' || workers === 0
        ? null
        : new ReadPool({
            path: this.path,
            size: workers,
            foldModule: options.foldModule,
            answerModule: options.answerModule,
          });
    this.#resume = new SqliteResumeTables(db, (text) => this.#sql(text));
    this.#keys = new SqliteKeyRegistryTables((text) => this.#sql(text));
    this.#purges = new PurgeRunner({
      db,
      sql: (text) => this.#sql(text),
      fts: this.#fts,
      checkpointer: this.#checkpointer,
      onDisk: this.path !== ':memory:',
    });
    // A purge stopped before its tables were rebuilt: their pages may keep its bytes, so rebuild them now.
    this.#purges.rebuild(unfinished);

    const sql = (text: string) => this.#sql(text);
    const insertOne = (e: StoredEvent) => insertEvent(sql, e);
    const applyChanges = (changes: BeliefChange[]) => applyBeliefChanges(sql, changes);
    this.#appendTx = db.transaction((events: StoredEvent[], changes: BeliefChange[]) => {
      const rows = events.map(insertOne);
      applyChanges(changes);
      return rows;
    });
    this.#beliefsTx = db.transaction(applyChanges);
    this.#readTx = db.transaction((requests: FactHeadRequest[]) => requests.map((r) => readFactHead(this.#sqlOf, r)));
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
    for (let h = this.#purges.held; h; h = this.#purges.held) await h;
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
    for (let h = this.#purges.held; h; h = this.#purges.held) await h;
    this.#beliefsTx(changes);
    this.#checkpointer?.noteWrite();
  }

  async existingEventIds(ids: string[]): Promise<Set<string>> {
    const stmt = this.#sql('SELECT 1 FROM events WHERE id = ?').pluck();
    return new Set(ids.filter((id) => stmt.get(id) !== undefined));
  }

  async importEvents(events: StoredEvent[]): Promise<number> {
    for (let h = this.#purges.held; h; h = this.#purges.held) await h;
    const rows = this.#importTx(events);
    this.#fts.addAll(rows);
    this.#checkpointer?.noteWrite();
    return rows.length;
  }

  /**
   * A heavy read: on a pool worker when one runs, else on this connection. Worker connections see
   * every transaction this connection committed before the read was sent.
   */
  #heavy<T>(op: ReadOp, ...args: unknown[]): Promise<T> {
    if (this.#pool?.running) return this.#pool.run<T>(op, ...args);
    const run = this.#reads as unknown as Record<ReadOp, (...a: unknown[]) => T>;
    try {
      return Promise.resolve(run[op].apply(this.#reads, args));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** Reads, whole `as_of` folds, and the most folds at once, answered by the pool's workers (0 without). */
  get pooledReads(): number {
    return this.#pool?.stats.reads ?? 0;
  }
  get pooledFolds(): number {
    return this.#pool?.stats.folds ?? 0;
  }
  get pooledFoldPeak(): number {
    return this.#pool?.stats.foldPeak ?? 0;
  }
  /** Answers lent in the read workers' slab so far, and its slots held now (`answer-slab.ts`). */
  lentAnswerStats(): { lent: number; slotsHeld: number } {
    return { lent: this.#pool?.stats.lent ?? 0, slotsHeld: this.#pool?.slotsHeld ?? 0 };
  }

  /** Whole `as_of` folds on a read worker while one runs (and the fold module was given); else null. */
  offLoopFolds(): OffLoopFolds | null {
    const pool = this.#pool;
    if (!pool?.running || !this.#foldModule) return null;
    this.#offLoop ??= pool.offLoopFolds(this.#flushFts);
    return this.#offLoop;
  }

  /** Heavy answers built as JSON bytes on a read worker while one runs (and the answer module was given). */
  renderedReads(): RenderedReads | null {
    const pool = this.#pool;
    if (!pool?.running) return null;
    this.#rendered ??= pool.renderedReads(this.#flushFts);
    return this.#rendered;
  }

  /** The read workers' thread ids and nice values (empty without workers). */
  get readThreads(): WorkerThreadInfo[] {
    return this.#pool?.threads ?? [];
  }

  async currentBeliefs(q: BeliefQuery): Promise<CurrentBelief[]> {
    // A short range of the clustered table answers a small limit faster here than a message would.
    if (q.limit <= 100) return this.#reads.currentBeliefs(q);
    return this.#heavy('currentBeliefs', q);
  }

  async searchBeliefs(q: BeliefQuery & { terms: string[] }): Promise<CurrentBelief[]> {
    if (q.terms.length === 0) return [];
    this.#fts.flush(); // the index holds every committed write before the read starts
    return this.#heavy('searchBeliefs', q);
  }

  factLog(query: FactLogQuery): Promise<StoredEvent[]> {
    return this.#heavy('factLog', query);
  }

  countFactEvents(query: LogCountQuery): Promise<number> {
    return this.#heavy('countFactEvents', query);
  }

  factGroups(query: FactGroupQuery): Promise<FactKey[] | null> {
    return this.#heavy('factGroups', query);
  }

  async factHead(namespace: string, subject: string, predicate: string, valueKey?: string): Promise<FactHead> {
    return readFactHead(this.#sqlOf, { namespace, subject, predicate, valueKey });
  }

  async factHeads(requests: FactHeadRequest[]): Promise<FactHead[]> {
    // One read transaction: statements outside a transaction each take and drop the WAL read lock.
    return this.#readTx(requests);
  }

  async factKeys(tenant: string, predicate: string): Promise<{ namespace: string; subject: string }[]> {
    return readFactKeys(this.#sqlOf, tenant, predicate);
  }

  async factEvents(query: FactQuery): Promise<StoredEvent[]> {
    return readFactEvents(this.#sqlOf, query);
  }

  async groupEvents(namespace: string, groups: FactKey[]): Promise<StoredEvent[]> {
    return readGroupEvents(this.#sqlOf, namespace, groups);
  }

  async searchEvents(namespace: string, terms: string[], limit: number): Promise<SearchHit[]> {
    if (terms.length === 0) return [];
    this.#fts.flush();
    return this.#heavy('searchEvents', namespace, terms, limit);
  }

  exportEvents(query: ExportQuery): Promise<StoredEvent[]> {
    return this.#heavy('exportEvents', query);
  }

  /** Erases the namespace for good, in short steps with other writes between them (purge-runner.ts). */
  purgeNamespace(namespace: string): Promise<number> {
    return this.#purges.purge(namespace);
  }

  /**
   * Purges that erased rows (an empty namespace's purge touches nothing), and the steps of purges so
   * far: delete transactions, FTS merge steps, resume tables rebuilt.
   */
  get purgeStats(): PurgeProgress & { erasures: number } {
    return this.#purges.stats;
  }

  // The other ports delegate to the tables' classes: typed by the port, so each line is the whole method.
  // Keys and registry versions (key-registry-tables.ts): writes wait out a purge's WAL cut or truncate.
  readonly registryVersions: RegistryStore['registryVersions'] = async (tenant) => this.#keys.registryVersions(tenant);
  readonly registryVersionById: RegistryStore['registryVersionById'] = async (id) => this.#keys.registryVersionById(id);
  readonly appendRegistryVersion: RegistryStore['appendRegistryVersion'] = (version, options) =>
    this.#unheld(() => this.#keys.appendRegistryVersion(version, options?.later));
  readonly insertKey: KeyStore['insertKey'] = (key) => this.#unheld(() => this.#keys.insertKey(key));
  readonly getKey: KeyStore['getKey'] = async (id) => this.#keys.getKey(id);
  readonly listKeys: KeyStore['listKeys'] = async (tenant) => this.#keys.listKeys(tenant);
  readonly deleteExpiredKeys: KeyStore['deleteExpiredKeys'] = (before) =>
    this.#unheld(() => this.#keys.deleteExpiredKeys(before));
  readonly revokeKey: KeyStore['revokeKey'] = (id, at) => this.#unheld(() => this.#keys.revokeKey(id, at));

  // Leases and resume records (resume-tables.ts): writes wait out a purge's WAL cut or truncate and note the checkpointer.
  readonly acquireLease: LeaseStore['acquireLease'] = (r) => this.#resumeWrite(() => this.#resume.acquire(r));
  readonly renewLease: LeaseStore['renewLease'] = (fence, ttlMs) =>
    this.#resumeWrite(() => this.#resume.renew(fence, ttlMs));
  readonly releaseLease: LeaseStore['releaseLease'] = (fence) => this.#resumeWrite(() => this.#resume.release(fence));
  readonly getLease: LeaseStore['getLease'] = async (namespace) => this.#resume.lease(namespace);
  readonly writeResume: ResumeStore['writeResume'] = (fence, writes) =>
    this.#resumeWrite(() => this.#resume.write(fence, writes));
  readonly importResume: ResumeStore['importResume'] = (records) =>
    this.#resumeWrite(() => this.#resume.import(records));
  readonly workingState: ResumeStore['workingState'] = async (namespace) => this.#resume.workingState(namespace);
  readonly workingStateHistory: ResumeStore['workingStateHistory'] = async (namespace, limit, beforeVersion) =>
    this.#resume.workingStateHistory(namespace, limit, beforeVersion);
  readonly milestones: ResumeStore['milestones'] = async (namespace, limit, beforeSeq) =>
    this.#resume.milestones(namespace, limit, beforeSeq);
  readonly turns: ResumeStore['turns'] = async (query) => this.#resume.turns(query);
  readonly countTurns: ResumeStore['countTurns'] = async (namespace) => this.#resume.countTurns(namespace);
  readonly output: ResumeStore['output'] = async (namespace, ref) => this.#resume.output(namespace, ref);
  readonly outputs: ResumeStore['outputs'] = async (namespace, limit, beforeRef) =>
    this.#resume.outputs(namespace, limit, beforeRef);
  readonly countOutputs: ResumeStore['countOutputs'] = async (namespace) => this.#resume.countOutputs(namespace);
  readonly pointers: ResumeStore['pointers'] = async (namespace, limit, afterName) =>
    this.#resume.pointers(namespace, limit, afterName);
  readonly checkpoints: ResumeStore['checkpoints'] = async (query) => this.#resume.checkpoints(query);
  readonly checkpointWrites: ResumeStore['checkpointWrites'] = async (namespace, keys) =>
    this.#resume.checkpointWrites(namespace, keys);
  readonly exportResume: ResumeStore['exportResume'] = (query) => this.#resume.export(query);

  /** Runs a write of keys or registry versions once no purge's WAL truncate runs. */
  async #unheld<T>(write: () => T): Promise<T> {
    for (let h = this.#purges.held; h; h = this.#purges.held) await h;
    return write();
  }

  /** Runs a lease or resume write once no purge's WAL truncate runs, then tells the checkpointer (like event writes). */
  async #resumeWrite<T>(write: () => T): Promise<T> {
    for (let h = this.#purges.held; h; h = this.#purges.held) await h;
    const value = write();
    this.#checkpointer?.noteWrite();
    return value;
  }

  async countEvents(namespace?: string): Promise<number> {
    const { where, args } = conditions([['namespace = ?', namespace]]);
    const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
    return this.#sql(`SELECT count(*) FROM events ${clause}`)
      .pluck()
      .get(...args) as number;
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
      await this.#pool?.close();
      await this.#checkpointer?.close();
      if (this.path !== ':memory:') this.#db.pragma('wal_checkpoint(TRUNCATE)');
      this.#db.close();
    }
  }
}
