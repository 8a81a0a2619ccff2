/**
 * @module
 * The facts-and-events port of a `Store` (`store.ts`): appending fact events with their "now"
 * projection of beliefs, the per-fact locked write, belief, log and text-search reads, export and
 * import of events, and the purge of a namespace. Used by `memory/` (engine, writer, recall) and the
 * export/import routes; SQLite and PostgreSQL implement it. No memory semantics here (folding lives in `memory/`).
 */
import type { RenderedReads } from './answer-text-port.ts';
import type { OffLoopFolds } from './log-fold-port.ts';
import type { FactGroupQuery, FactLogQuery, LogCountQuery } from './log-reads.ts';

/** Who wrote an event: "which pod did the work". */
export interface Actor {
  tenant: string;
  agent: string | null;
  /** Pod or instance name, when the key came from a workload. */
  session: string | null;
  keyId: string | null;
}

/** One appended fact event: an assertion, a targeted retraction, or a blanket retraction. */
export interface StoredEvent {
  /** Time-ordered id (`ev_…`), kept verbatim across export/import. */
  id: string;
  /** `tenant:agent`. */
  namespace: string;
  tenant: string;
  /** Normalised lower-case subject. */
  subject: string;
  /** Canonical snake_case predicate. */
  predicate: string;
  /** The JSON value; `null` for a blanket retraction. */
  value: unknown;
  /** Identity of the value (case-insensitive string, canonical number…); `null` for a blanket retraction. */
  valueKey: string | null;
  retraction: boolean;
  kind: string | null;
  /** 0..1. */
  confidence: number;
  source: string | null;
  evidence: string | null;
  /** Epoch ms the fact was observed (clients may back-date). */
  observedAt: number;
  /** Epoch ms the server recorded it. */
  recordedAt: number;
  actor: Actor;
}

/** A (subject, predicate) pair. */
export interface FactKey {
  subject: string;
  predicate: string;
}

/** Which facts to load. */
export interface FactQuery {
  namespace: string;
  subject?: string;
  predicate?: string;
  /** At most this many (subject, predicate) groups, in subject, predicate order. */
  maxGroups: number;
}

/** A value a newer value of a single predicate replaced. */
export interface Replaced {
  value: unknown;
  /** Epoch ms. */
  observedAt: number;
}

/** A value believed now: the assertion holding it and what it replaced (most recent first). */
export interface CurrentBelief {
  event: StoredEvent;
  replaced: Replaced[];
}

/**
 * How the beliefs of one (subject, predicate) change with a write: either `current` (the whole new
 * set, replacing whatever the store held for the fact) or an increment (`remove` these event ids,
 * then `add` these beliefs).
 */
export interface BeliefChange {
  namespace: string;
  subject: string;
  predicate: string;
  current?: { eventId: string; replaced: Replaced[] }[];
  remove?: string[];
  add?: { eventId: string; replaced: Replaced[] }[];
}

/** Which current beliefs to read. */
export interface BeliefQuery {
  namespace: string;
  subject?: string;
  predicate?: string;
  kind?: string;
  minConfidence?: number;
  limit: number;
}

/** What a writer needs to know of one fact before appending to it. */
export interface FactHead {
  beliefs: CurrentBelief[];
  /** The latest observed_at of any event of the fact (assertion or retraction); null when it has none. */
  lastObservedAt: number | null;
  /**
   * The latest observed_at of a retraction that withdraws the requested value (a retraction of all
   * values or of that value) or, for a request of all beliefs, of any retraction; null when none.
   * With it a writer places a back-dated value of a multi fact without reading the fact's log: the
   * value is believed iff it comes after that retraction (an assertion sorts before a retraction of
   * the same ms).
   */
  lastRetractionAt: number | null;
}

/** One fact a writer is about to change, for `FactStore.factHeads`. */
export interface FactHeadRequest {
  namespace: string;
  subject: string;
  predicate: string;
  /** Only the beliefs holding this value (a multi fact may hold thousands); all when absent. */
  valueKey?: string;
}

/** A text-search hit. */
export interface SearchHit {
  eventId: string;
  subject: string;
  predicate: string;
}

/** Which events to export, in id order. */
export interface ExportQuery {
  /** One namespace, or every namespace of `tenant` (or everything when both are absent). */
  namespace?: string;
  tenant?: string;
  /**
   * Only events after this event in the store's `exportOrder`: with `id`, any id (stored or not);
   * with `commit`, the id of a stored event, else 400 `invalid_request` naming `since`.
   */
  since?: string;
  limit: number;
}

/** A fact a write locks. */
export interface FactRef {
  namespace: string;
  subject: string;
  predicate: string;
}

/** What a write may read inside its transaction, of the facts it locked. */
export interface FactReader {
  factHead(namespace: string, subject: string, predicate: string, valueKey?: string): Promise<FactHead>;
  groupEvents(namespace: string, groups: FactKey[]): Promise<StoredEvent[]>;
  existingEventIds(ids: string[]): Promise<Set<string>>;
}

/** What a write decided: events to append, belief changes to apply, and its answer to the caller. */
export interface FactWrite<T> {
  events: StoredEvent[];
  changes: BeliefChange[];
  result: T;
}

/** Which facts a write locks and which heads it reads first (one round trip for a whole batch). */
export interface FactWriteScope {
  /** Facts to lock besides those named in `heads` (e.g. every fact of an import). */
  lock?: FactRef[];
  heads: FactHeadRequest[];
  /**
   * The registry version (id of the tenant's newest, as the caller knew it) each tenant's part of
   * the write was validated with. A store of several writers (PostgreSQL) holds these tenants'
   * registries until the write commits (a replacement waits for it) and, when one of them is not the
   * newest stored version any more, runs no plan and throws `StaleRegistryError`. A store with one
   * writer (SQLite) may ignore it: its writer queue orders writes and registry changes already.
   */
  registries?: { tenant: string; versionId: string }[];
}

/** Fact events and their current beliefs. All methods are safe to call concurrently. */
export interface FactStore {
  /**
   * How many `writeFacts` of one replica's writer may run at once (default 1). A driver whose writes
   * lock their own facts (PostgreSQL) allows several: a write there spends most of its time waiting
   * on round trips and the commit's WAL flush, so batches in flight overlap those waits.
   */
  readonly writeConcurrency?: number;
  /**
   * The order of `exportEvents`. `id`: one writer commits in id order (SQLite). `commit`: writes of
   * several replicas commit out of id order, so events come in commit order, each transaction's in
   * insertion order, and only once every older transaction has ended (PostgreSQL).
   */
  readonly exportOrder: 'id' | 'commit';
  /**
   * Appends events and applies belief changes in one transaction: all or none.
   * @param changes the new current beliefs of each fact the events touch (the "now" projection)
   */
  appendEvents(events: StoredEvent[], changes?: BeliefChange[]): Promise<void>;
  /**
   * One write, read and written under one transaction: locks the facts of `scope` (per-fact locks, so
   * writers of other facts, also on other replicas, go on), reads `scope.heads`, lets `plan` decide
   * what to append (reading more of the locked facts through `tx`), then appends the events and belief
   * changes, all or none. A driver with a single writer (SQLite: one process per data folder, one
   * writer queue) may skip the locks.
   * @param plan called once with the heads in request order
   * @returns what `plan` returned as `result`
   */
  writeFacts<T>(scope: FactWriteScope, plan: (heads: FactHead[], tx: FactReader) => Promise<FactWrite<T>>): Promise<T>;
  /** Replaces the current beliefs of facts (after an import or a registry change). */
  replaceBeliefs(changes: BeliefChange[]): Promise<void>;
  /** Current beliefs matching `query`, in subject, predicate, observed_at order. */
  currentBeliefs(query: BeliefQuery): Promise<CurrentBelief[]>;
  /** Current beliefs whose assertion matches every term, newest written first. */
  searchBeliefs(query: BeliefQuery & { terms: string[] }): Promise<CurrentBelief[]>;
  /**
   * Current beliefs and latest event time of one fact.
   * @param valueKey only the beliefs holding this value (a multi fact may hold thousands)
   */
  factHead(namespace: string, subject: string, predicate: string, valueKey?: string): Promise<FactHead>;
  /**
   * `factHead` of several facts, read from one snapshot: the writer asks once per group commit
   * (one read transaction, or one round trip, instead of one per fact).
   * @returns one head per request, in request order
   */
  factHeads(requests: FactHeadRequest[]): Promise<FactHead[]>;
  /** Every (namespace, subject) of a tenant that has events of `predicate`. */
  factKeys(tenant: string, predicate: string): Promise<{ namespace: string; subject: string }[]>;
  /** Inserts events keeping their ids; an id already present is skipped. Returns how many were inserted. */
  importEvents(events: StoredEvent[]): Promise<number>;
  /** Which of `ids` are stored already. */
  existingEventIds(ids: string[]): Promise<Set<string>>;
  /** All events of the groups matching `query`, grouped, each group in insertion order. */
  factEvents(query: FactQuery): Promise<StoredEvent[]>;
  /** All events of the given groups of one namespace. */
  groupEvents(namespace: string, groups: FactKey[]): Promise<StoredEvent[]>;
  /** A page of the facts' logs: the groups in the order given, each in fold order (`log-reads.ts`). */
  factLog(query: FactLogQuery): Promise<StoredEvent[]>;
  /** How many events the groups hold (as of `asOf`), counted no further than `max + 1`. */
  countFactEvents(query: LogCountQuery): Promise<number>;
  /**
   * The first `limit` facts (subject, predicate) with events, by index seeks (never walking events).
   * @returns null when more than `maxSteps` facts would have to be looked at
   */
  factGroups(query: FactGroupQuery): Promise<FactKey[] | null>;
  /**
   * Full-text search over the events (any value, held or not) of one namespace.
   * @param terms words (from `common/words.ts`) that must all match
   * @returns hits, newest written first
   */
  searchEvents(namespace: string, terms: string[], limit: number): Promise<SearchHit[]>;
  /**
   * Whole `as_of` folds where they do not hold the event loop (SQLite: a read worker, given the fold
   * module at open), while that is possible now; absent or null: the engine folds page by page itself.
   */
  offLoopFolds?(): OffLoopFolds | null;
  /**
   * Heavy reads answered as finished JSON bytes built where the rows were read (SQLite: a read worker,
   * given the answer module at open), while that is possible now; absent or null: the server maps and
   * serializes the rows itself.
   */
  renderedReads?(): RenderedReads | null;
  /**
   * Answers `renderedReads` lent so far (their bytes in memory the store gives out and takes back, not
   * new buffers) and the slots of that memory out now; absent: the store lends none.
   */
  lentAnswerStats?(): { lent: number; slotsHeld: number };
  /**
   * Events for export, in `exportOrder`; paging from the last event of a page with `since` never
   * skips an event, whatever commits meanwhile.
   * @throws {TetherError} 400 `invalid_request` (`since`) when a commit-order store has no such event
   */
  exportEvents(query: ExportQuery): Promise<StoredEvent[]>;
  /**
   * Erases every event and every resume record (lease included) of a namespace for good. The lease
   * epoch counter is store-wide and survives, so a later acquire still gets a higher epoch.
   * @returns how many events were erased
   */
  purgeNamespace(namespace: string): Promise<number>;
  /** Events stored: of one namespace, or in total (metrics, bench). */
  countEvents(namespace?: string): Promise<number>;
}
