/**
 * @module
 * The SQLite store's heavy reads as one class over a connection: search (beliefs and events), beliefs
 * by filter, export pages, the bounded log reads of `log-reads.ts`, whole `as_of` folds (the pure
 * fold module the worker loaded: `store/log-fold-port.ts`, so only the answer leaves the worker), and
 * the heavy answers as finished JSON bytes (the answer module: `store/answer-text-port.ts`). The store runs them on its
 * own connection (in memory) or sends them to `read-pool.ts`, whose workers each build one over a
 * read-only connection: the same statements answer either way. Synchronous; no writes here.
 */
import type Database from 'better-sqlite3';
import { type AnswerBytes, type AnswerTextModule, cutPage, type ExportPageBytes } from '../answer-text-port.ts';
import { type BeliefRow, type EventRow, rowToBelief, rowToEvent } from '../event-rows.ts';
import { distinctFacts, type FoldAnswer, type FoldModule, type FoldQuery, LOG_PAGE } from '../log-fold-port.ts';
import type { FactGroupQuery, FactLogQuery, LogCountQuery, LogPosition } from '../log-reads.ts';
import type { BeliefQuery, CurrentBelief, ExportQuery, FactKey, SearchHit, StoredEvent } from '../store.ts';
import { beliefFilters, conditions } from './belief-filters.ts';
import { ftsMatch } from './fts.ts';

/** Before any event (fold order) and after any: the bounds of a log read without cursor or as_of. */
const FIRST = { observedAt: -9e15, retraction: false, id: '' };
const LAST_MS = 9e15;

/** The reads a pool worker can run: the method names of `SqliteReads`. */
export type ReadOp =
  | 'currentBeliefs'
  | 'searchBeliefs'
  | 'searchEvents'
  | 'exportEvents'
  | 'factLog'
  | 'countFactEvents'
  | 'factGroups'
  | 'searchFacts'
  | 'foldFactLogs'
  | 'historyPageText'
  | 'foldFactLogsText'
  | 'searchBeliefsText'
  | 'currentBeliefsText'
  | 'exportPageText';

/** The modules a read worker loaded (memory semantics and wire text the store never imports). */
export interface ReadModules {
  /** Where whole `as_of` folds run; null elsewhere. */
  folds?: FoldModule | null;
  /** Where heavy answers are built as text; null elsewhere. */
  answers?: AnswerTextModule | null;
}

const utf8 = new TextEncoder();

/** Heavy reads over one connection (prepared statements cached). */
export class SqliteReads {
  readonly #db: Database.Database;
  readonly #statements = new Map<string, Database.Statement>();
  readonly #inTx: <T>(run: () => T) => T;
  readonly #folds: FoldModule | null;
  readonly #answers: AnswerTextModule | null;

  /** @param modules what a read worker loaded (none on the store's own connection) */
  constructor(db: Database.Database, modules: ReadModules = {}) {
    this.#db = db;
    this.#folds = modules.folds ?? null;
    this.#answers = modules.answers ?? null;
    // Reads of several statements see one snapshot (a read transaction; deferred, so it takes no lock).
    const tx = db.transaction((run: () => unknown) => run());
    this.#inTx = <T>(run: () => T) => (db.inTransaction ? run() : (tx(run) as T));
  }

  #sql(text: string): Database.Statement {
    let s = this.#statements.get(text);
    if (!s) {
      s = this.#db.prepare(text);
      this.#statements.set(text, s);
    }
    return s;
  }

  currentBeliefs(q: BeliefQuery): CurrentBelief[] {
    const { where, args } = beliefFilters(q);
    const rows = this.#sql(
      `SELECT e.*, b.replaced AS belief_replaced FROM beliefs b JOIN events e ON e.id = b.event_id
       WHERE ${where.join(' AND ')} ORDER BY b.subject, b.predicate, b.observed_at, b.event_id LIMIT ?`,
    ).all(...args, q.limit) as BeliefRow[];
    return rows.map(rowToBelief);
  }

  /** Call after the FTS queue was flushed (the writing connection does that). */
  searchBeliefs(q: BeliefQuery & { terms: string[] }): CurrentBelief[] {
    if (q.terms.length === 0) return [];
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

  /** Call after the FTS queue was flushed. */
  searchEvents(namespace: string, terms: string[], limit: number): SearchHit[] {
    if (terms.length === 0) return [];
    return this.#sql(
      `SELECT e.id AS eventId, e.subject AS subject, e.predicate AS predicate
       FROM events_fts f JOIN events e ON e.seq = f.rowid
       WHERE events_fts MATCH ? AND e.namespace = ? ORDER BY f.rowid DESC LIMIT ?`,
    ).all(ftsMatch(namespace, terms), namespace, limit) as SearchHit[];
  }

  exportEvents(query: ExportQuery): StoredEvent[] {
    const { where, args } = conditions([
      ['namespace = ?', query.namespace],
      ['tenant = ?', query.tenant],
      ['id > ?', query.since],
    ]);
    const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
    const rows = this.#sql(`SELECT * FROM events ${clause} ORDER BY id LIMIT ?`).all(
      ...args,
      query.limit,
    ) as EventRow[];
    return rows.map(rowToEvent);
  }

  factLog(q: FactLogQuery): StoredEvent[] {
    // From the cursor's place on: `observed_at >= ?` starts the index range there, the row value
    // skips the events of that very ms already read; ties sort on (retraction, id) in small groups.
    const stmt = this.#sql(
      `SELECT * FROM events WHERE namespace = ? AND subject = ? AND predicate = ? AND observed_at <= ?
         AND observed_at >= ? AND (observed_at, retraction, id) > (?, ?, ?)
       ORDER BY observed_at, retraction, id LIMIT ?`,
    );
    const after = q.after;
    let start = 0;
    if (after) {
      start = q.groups.findIndex((g) => g.subject === after.subject && g.predicate === after.predicate);
      if (start < 0) return [];
    }
    return this.#inTx(() => {
      const out: StoredEvent[] = [];
      for (let i = start; i < q.groups.length && out.length < q.limit; i++) {
        const g = q.groups[i] as FactKey;
        const from = i === start && after ? after : FIRST;
        const rows = stmt.all(
          q.namespace,
          g.subject,
          g.predicate,
          q.asOf ?? LAST_MS,
          from.observedAt,
          from.observedAt,
          from.retraction ? 1 : 0,
          from.id,
          q.limit - out.length,
        ) as EventRow[];
        for (const r of rows) out.push(rowToEvent(r));
      }
      return out;
    });
  }

  countFactEvents(q: LogCountQuery): number {
    // An index-only range per fact (events_fact ends with observed_at), stopped past the cap.
    const stmt = this.#sql(
      `SELECT count(*) FROM (SELECT 1 FROM events
         WHERE namespace = ? AND subject = ? AND predicate = ? AND observed_at <= ? LIMIT ?)`,
    ).pluck();
    return this.#inTx(() => {
      let n = 0;
      for (const g of q.groups) {
        if (n > q.max) break;
        n += stmt.get(q.namespace, g.subject, g.predicate, q.asOf ?? LAST_MS, q.max + 1 - n) as number;
      }
      return Math.min(n, q.max + 1);
    });
  }

  factGroups(q: FactGroupQuery): FactKey[] | null {
    // A loose index scan: one seek per distinct (subject, predicate), whatever their event counts.
    const next = this.#sql(
      `SELECT subject, predicate FROM events WHERE namespace = ? AND (subject, predicate) > (?, ?)
       ORDER BY subject, predicate LIMIT 1`,
    );
    return this.#inTx(() => {
      const out: FactKey[] = [];
      let at: FactKey = { subject: q.subject ?? '', predicate: '' };
      for (let steps = 0; out.length < q.limit; steps++) {
        if (steps >= q.maxSteps) return null;
        const g = next.get(q.namespace, at.subject, at.predicate) as FactKey | undefined;
        if (!g || (q.subject !== undefined && g.subject !== q.subject)) break;
        if (q.predicate === undefined || g.predicate === q.predicate) out.push(g);
        at = g;
      }
      return out;
    });
  }

  /** Call after the FTS queue was flushed. The facts of the newest `hits` matching events. */
  searchFacts(namespace: string, terms: string[], hits: number): FactKey[] {
    return distinctFacts(this.searchEvents(namespace, terms, hits));
  }

  /**
   * A whole `as_of` fold in one read transaction (one snapshot): the capped count first (nothing is
   * read past the cap), then the logs page by page, folded as they are read.
   */
  foldFactLogs(q: FoldQuery): FoldAnswer {
    return this.#inTx(() => {
      const base = { namespace: q.namespace, groups: q.groups, asOf: q.asOf };
      if (this.countFactEvents({ ...base, max: q.max }) > q.max) return { capped: true };
      if (!this.#folds) throw new Error('no fold module was loaded here (SqliteStoreOptions.foldModule)');
      const fold = new this.#folds.LogFold(q);
      let after: LogPosition | undefined;
      for (;;) {
        const page = this.factLog({ ...base, after, limit: LOG_PAGE });
        if (!fold.add(page)) return { capped: true };
        if (page.length < LOG_PAGE) break;
        after = page[page.length - 1] as StoredEvent;
      }
      return { capped: false, beliefs: fold.finish() };
    });
  }

  // The heavy answers as finished bytes. Encoded with TextEncoder, never Buffer.from: a small Buffer
  // lives in Node's shared pool, and the worker moves (transfers) these bytes to the event loop.

  /** `factLog` of `limit + 1` events cut to one history page, as the answer module writes it. */
  historyPageText(q: FactLogQuery): AnswerBytes {
    const { events, next } = cutPage(this.factLog({ ...q, limit: q.limit + 1 }), q.limit);
    return utf8.encode(this.#text().historyAnswerText(events, next));
  }

  foldFactLogsText(q: FoldQuery): { capped: true } | { capped: false; body: AnswerBytes } {
    const answer = this.foldFactLogs(q);
    return answer.capped
      ? answer
      : { capped: false, body: utf8.encode(this.#text().beliefsAnswerText(answer.beliefs)) };
  }

  searchBeliefsText(q: BeliefQuery & { terms: string[] }): AnswerBytes {
    return utf8.encode(this.#text().beliefsAnswerText(this.searchBeliefs(q)));
  }

  currentBeliefsText(q: BeliefQuery): AnswerBytes {
    return utf8.encode(this.#text().beliefsAnswerText(this.currentBeliefs(q)));
  }

  exportPageText(query: ExportQuery): ExportPageBytes {
    const events = this.exportEvents(query);
    const text = this.#text();
    const tenantStarts: ExportPageBytes['tenantStarts'] = [];
    const seen = new Set<string>();
    let at = 0;
    let body = '';
    for (const e of events) {
      if (!seen.has(e.tenant)) {
        seen.add(e.tenant);
        tenantStarts.push({ tenant: e.tenant, at });
      }
      const line = `${text.eventLineText(e)}\n`;
      body += line;
      at += Buffer.byteLength(line);
    }
    const last = events[events.length - 1];
    return { body: utf8.encode(body), count: events.length, lastId: last ? last.id : null, tenantStarts };
  }

  #text(): AnswerTextModule {
    if (!this.#answers) throw new Error('no answer module was loaded here (SqliteStoreOptions.answerModule)');
    return this.#answers;
  }
}
