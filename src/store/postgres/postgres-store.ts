/**
 * @module
 * The shared `Store`: PostgreSQL through a `pg` pool, for several memory replicas on one database.
 * Every fact write is one transaction that takes per-fact advisory locks, reads the facts' heads and
 * appends (`writeFacts`); search uses the same words as SQLite in a GIN index; key revocations,
 * registry versions and purges NOTIFY the other replicas (`subscribe`). Database failures reach
 * clients as 503 `unavailable`. Holds no memory semantics; picked by the CLI.
 */
import pg from 'pg';
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
import type { FactGroupQuery, FactLogQuery, LogCountQuery } from '../log-reads.ts';
import type { AppendRegistryOptions, RegistryStore, RegistryVersion } from '../registry-store.ts';
import type { ResumeStore } from '../resume-store.ts';
import type { ResumeExportQuery, ResumeRecordLine } from '../resume-types.ts';
import type { Store } from '../store.ts';
import type { StoreChange } from '../store-lifecycle.ts';
import { ChangeListener, notifyChange } from './change-listener.ts';
import {
  hostPort,
  inTransaction,
  isUnavailable,
  maskUrl,
  type PostgresConnectionOptions,
  poolConfig,
  storeError,
} from './connection.ts';
import { readExportPage } from './export-events.ts';
import {
  checkRegistryVersions,
  deleteExpired,
  insertKeyRow,
  insertRegistryVersion,
  readKey,
  readKeys,
  readRegistryVersionById,
  readRegistryVersions,
  revokeKeyRow,
} from './key-registry.ts';
import { lockFacts, lockNamespace } from './locks.ts';
import { countFactLog, readFactGroups, readFactLog } from './log-reads.ts';
import { migrate } from './migrations.ts';
import {
  insertEvents,
  type Queryable,
  readExistingIds,
  readFactHeads,
  readGroupEvents,
  writeEventsAndBeliefs,
} from './queries.ts';
import { PostgresResumeTables } from './resume-tables.ts';
import { readCurrentBeliefs, readSearchBeliefs, readSearchEvents } from './search-reads.ts';

/** Options for `openPostgresStore`. */
export interface PostgresStoreOptions extends PostgresConnectionOptions {
  /** Told when the change channel drops or comes back (no secrets in `detail`). */
  onChannelState?: (state: 'connected' | 'dropped', detail?: string) => void;
}

/**
 * Connects, applies pending migrations (under an advisory lock) and starts the change channel.
 * @throws {Error} naming host and port (never the password) when the database cannot be reached
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const config = poolConfig(options);
  const pool = new pg.Pool(config);
  // An idle client's error (the server went away) must not crash the process; the next query fails.
  pool.on('error', () => {});
  try {
    await migrate(pool);
  } catch (err) {
    await pool.end().catch(() => {});
    const reason = (err as Error).message;
    if (isUnavailable(err) || /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|authentication|does not exist/i.test(reason)) {
      throw new Error(`Cannot reach PostgreSQL at ${hostPort(options.url)}: ${reason}`);
    }
    throw new Error(`Cannot prepare the PostgreSQL database ${maskUrl(options.url)}: ${reason}`);
  }
  const store = new PostgresStore(pool, config, options.onChannelState);
  await store.listen();
  return store;
}

/** `pg` driver. */
export class PostgresStore implements Store {
  readonly kind = 'postgres';
  readonly exportOrder = 'commit';
  /**
   * Batches one replica writes at once. Measured with bench:memory at 10^5 events on this 2-core
   * machine: one at a time left the replica idle, waiting on the transaction's round trips and
   * commit; per-fact locks keep concurrent batches of one fact in order (as across replicas).
   */
  readonly writeConcurrency: number;
  readonly #pool: pg.Pool;
  readonly #listener: ChangeListener;
  readonly #listeners = new Set<(change: StoreChange) => void>();
  readonly #resume: PostgresResumeTables;
  #closing: Promise<void> | null = null;

  constructor(pool: pg.Pool, config: pg.PoolConfig, onState?: PostgresStoreOptions['onChannelState']) {
    this.#pool = pool;
    // Half the pool at most, so reads always find a connection.
    this.writeConcurrency = Math.max(1, Math.min(4, Math.floor((config.max ?? 10) / 2)));
    this.#resume = new PostgresResumeTables(pool, (work) => this.#tx(work));
    this.#listener = new ChangeListener({
      config: { ...config, query_timeout: undefined },
      onChange: (c) => {
        for (const l of this.#listeners) l(c);
      },
      onState,
    });
  }

  /** Starts the change channel (the store works without it; it retries in the background). */
  async listen(): Promise<void> {
    await this.#listener.start();
  }

  /** True while the change channel is connected. */
  get listening(): boolean {
    return this.#listener.connected;
  }

  subscribe(listener: (change: StoreChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** A query on the pool, failures mapped by `storeError`. */
  #q<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    return this.#read((db) => db.query<R>(text, values) as Promise<pg.QueryResult<R>>);
  }

  /** Runs `work` in one transaction on one client (`connection.ts`). */
  #tx<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    if (this.#closing) throw new Error('store is closed');
    return inTransaction(this.#pool, work);
  }

  async writeFacts<T>(
    scope: FactWriteScope,
    plan: (heads: FactHead[], tx: FactReader) => Promise<FactWrite<T>>,
  ): Promise<T> {
    const planned = scope.registries ?? [];
    return this.#tx(async (c) => {
      await lockFacts(
        c,
        [...(scope.lock ?? []), ...scope.heads],
        planned.map((r) => r.tenant),
      );
      // Another replica may have stored a version (a new cardinality) since the write was validated.
      await checkRegistryVersions(c, planned);
      const heads = await readFactHeads(c, scope.heads);
      const tx: FactReader = {
        factHead: async (namespace, subject, predicate, valueKey) =>
          (await readFactHeads(c, [{ namespace, subject, predicate, valueKey }]))[0] as FactHead,
        groupEvents: (namespace, groups) => readGroupEvents(c, namespace, groups),
        existingEventIds: (ids) => readExistingIds(c, ids),
      };
      const w = await plan(heads, tx);
      await writeEventsAndBeliefs(c, w.events, w.changes);
      return w.result;
    });
  }

  async appendEvents(events: StoredEvent[], changes: BeliefChange[] = []): Promise<void> {
    await this.#tx(async (c) => {
      await writeEventsAndBeliefs(c, events, changes);
    });
  }

  async replaceBeliefs(changes: BeliefChange[]): Promise<void> {
    await this.#tx((c) => writeEventsAndBeliefs(c, [], changes));
  }

  async importEvents(events: StoredEvent[]): Promise<number> {
    return this.#tx((c) => insertEvents(c, events, true));
  }

  async existingEventIds(ids: string[]): Promise<Set<string>> {
    return this.#read((db) => readExistingIds(db, ids));
  }

  /** A read on the pool, failures mapped by `storeError`. */
  async #read<T>(run: (db: Queryable) => Promise<T>): Promise<T> {
    if (this.#closing) throw new Error('store is closed');
    try {
      return await run(this.#pool);
    } catch (err) {
      throw storeError(err);
    }
  }

  // Beliefs now and search: search-reads.ts.
  currentBeliefs(q: BeliefQuery): Promise<CurrentBelief[]> {
    return this.#read((db) => readCurrentBeliefs(db, q));
  }
  searchBeliefs(q: BeliefQuery & { terms: string[] }): Promise<CurrentBelief[]> {
    return this.#read((db) => readSearchBeliefs(db, q));
  }
  searchEvents(namespace: string, terms: string[], limit: number): Promise<SearchHit[]> {
    return this.#read((db) => readSearchEvents(db, namespace, terms, limit));
  }

  async factHead(namespace: string, subject: string, predicate: string, valueKey?: string): Promise<FactHead> {
    return (await this.factHeads([{ namespace, subject, predicate, valueKey }]))[0] as FactHead;
  }

  async factHeads(requests: FactHeadRequest[]): Promise<FactHead[]> {
    // One snapshot: both statements in one repeatable-read transaction.
    return this.#tx(async (c) => {
      await c.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
      return readFactHeads(c, requests);
    });
  }

  async factKeys(tenant: string, predicate: string): Promise<{ namespace: string; subject: string }[]> {
    const res = await this.#q<{ namespace: string; subject: string }>(
      'SELECT DISTINCT namespace, subject FROM events WHERE tenant = $1 AND predicate = $2',
      [tenant, predicate],
    );
    return res.rows;
  }

  async factEvents(query: FactQuery): Promise<StoredEvent[]> {
    if (query.subject !== undefined && query.predicate !== undefined) {
      return this.groupEvents(query.namespace, [{ subject: query.subject, predicate: query.predicate }]);
    }
    const args: unknown[] = [query.namespace];
    const where = ['namespace = $1'];
    if (query.subject !== undefined) {
      args.push(query.subject);
      where.push(`subject = $${args.length}`);
    }
    if (query.predicate !== undefined) {
      args.push(query.predicate);
      where.push(`predicate = $${args.length}`);
    }
    args.push(query.maxGroups);
    const groups = await this.#q<FactKey>(
      `SELECT DISTINCT subject, predicate FROM events WHERE ${where.join(' AND ')}
       ORDER BY subject, predicate LIMIT $${args.length}`,
      args,
    );
    return this.groupEvents(query.namespace, groups.rows);
  }

  async groupEvents(namespace: string, groups: FactKey[]): Promise<StoredEvent[]> {
    return this.#read((db) => readGroupEvents(db, namespace, groups));
  }

  // Bounded log reads: log-reads.ts.
  factLog(query: FactLogQuery): Promise<StoredEvent[]> {
    return this.#read((db) => readFactLog(db, query));
  }
  countFactEvents(query: LogCountQuery): Promise<number> {
    return this.#read((db) => countFactLog(db, query));
  }
  factGroups(query: FactGroupQuery): Promise<FactKey[] | null> {
    return this.#read((db) => readFactGroups(db, query));
  }

  /** Commit order, not id order: export-events.ts. */
  exportEvents(query: ExportQuery): Promise<StoredEvent[]> {
    return this.#read((db) => readExportPage(db, query));
  }

  async purgeNamespace(namespace: string): Promise<number> {
    return this.#tx(async (c) => {
      // Exclusive: writes in flight to the namespace finish first, later ones wait for the purge.
      await lockNamespace(c, namespace);
      const erased = await c.query('DELETE FROM events WHERE namespace = $1', [namespace]);
      await c.query('DELETE FROM beliefs WHERE namespace = $1', [namespace]);
      await this.#resume.purge(c, namespace);
      await notifyChange(c, { kind: 'purged', namespace });
      return erased.rowCount ?? 0;
    });
  }

  // The other ports delegate (key-registry.ts, resume-tables.ts): typed by the port, each line the whole
  // method; failures mapped as every other call.
  readonly registryVersions: RegistryStore['registryVersions'] = (tenant) =>
    this.#read((db) => readRegistryVersions(db, tenant));
  readonly registryVersionById: RegistryStore['registryVersionById'] = (id) =>
    this.#read((db) => readRegistryVersionById(db, id));
  async appendRegistryVersion(version: RegistryVersion, options?: AppendRegistryOptions): Promise<RegistryVersion> {
    return this.#tx(async (c) => {
      const stored = await insertRegistryVersion(c, version, options?.later);
      await notifyChange(c, { kind: 'registry', tenant: version.tenant });
      return stored;
    });
  }
  readonly insertKey: KeyStore['insertKey'] = (key) => this.#read((db) => insertKeyRow(db, key));
  readonly getKey: KeyStore['getKey'] = (id) => this.#read((db) => readKey(db, id));
  readonly listKeys: KeyStore['listKeys'] = (tenant) => this.#read((db) => readKeys(db, tenant));
  readonly deleteExpiredKeys: KeyStore['deleteExpiredKeys'] = (before) => this.#read((db) => deleteExpired(db, before));
  readonly revokeKey: KeyStore['revokeKey'] = (id, at) => this.#read((db) => revokeKeyRow(db, id, at));

  readonly acquireLease: LeaseStore['acquireLease'] = (r) => this.#read(() => this.#resume.acquire(r));
  readonly renewLease: LeaseStore['renewLease'] = (fence, ttlMs) => this.#read(() => this.#resume.renew(fence, ttlMs));
  readonly releaseLease: LeaseStore['releaseLease'] = (fence) => this.#read(() => this.#resume.release(fence));
  readonly getLease: LeaseStore['getLease'] = (namespace) => this.#read(() => this.#resume.lease(namespace));
  readonly writeResume: ResumeStore['writeResume'] = (fence, writes) =>
    this.#read(() => this.#resume.write(fence, writes));
  readonly importResume: ResumeStore['importResume'] = (records) => this.#read(() => this.#resume.import(records));
  readonly workingState: ResumeStore['workingState'] = (namespace) =>
    this.#read(() => this.#resume.workingState(namespace));
  readonly workingStateHistory: ResumeStore['workingStateHistory'] = (namespace, limit, beforeVersion) =>
    this.#read(() => this.#resume.workingStateHistory(namespace, limit, beforeVersion));
  readonly milestones: ResumeStore['milestones'] = (namespace, limit, beforeSeq) =>
    this.#read(() => this.#resume.milestones(namespace, limit, beforeSeq));
  readonly turns: ResumeStore['turns'] = (query) => this.#read(() => this.#resume.turns(query));
  readonly countTurns: ResumeStore['countTurns'] = (namespace) =>
    this.#read(() => this.#resume.count('turns', namespace));
  readonly output: ResumeStore['output'] = (namespace, ref) => this.#read(() => this.#resume.output(namespace, ref));
  readonly outputs: ResumeStore['outputs'] = (namespace, limit, beforeRef) =>
    this.#read(() => this.#resume.outputs(namespace, limit, beforeRef));
  readonly countOutputs: ResumeStore['countOutputs'] = (namespace) =>
    this.#read(() => this.#resume.count('outputs', namespace));
  readonly pointers: ResumeStore['pointers'] = (namespace, limit, afterName) =>
    this.#read(() => this.#resume.pointers(namespace, limit, afterName));
  readonly checkpoints: ResumeStore['checkpoints'] = (query) => this.#read(() => this.#resume.checkpoints(query));
  readonly checkpointWrites: ResumeStore['checkpointWrites'] = (namespace, keys) =>
    this.#read(() => this.#resume.checkpointWrites(namespace, keys));
  async *exportResume(query: ResumeExportQuery): AsyncIterable<ResumeRecordLine> {
    try {
      yield* this.#resume.export(query);
    } catch (err) {
      throw storeError(err);
    }
  }

  async countEvents(namespace?: string): Promise<number> {
    const res =
      namespace === undefined
        ? await this.#q<{ n: number }>('SELECT count(*) AS n FROM events')
        : await this.#q<{ n: number }>('SELECT count(*) AS n FROM events WHERE namespace = $1', [namespace]);
    return res.rows[0]?.n ?? 0;
  }

  async ping(): Promise<void> {
    await this.#q('SELECT 1');
  }

  async close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.#listener.close();
      await this.#pool.end();
    })();
    return this.#closing;
  }
}
