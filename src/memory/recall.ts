/**
 * @module
 * The memory engine's read side: exact recall, text search that folds before answering (so it never
 * returns a superseded or retracted value), and history. Every read may be asked "as of T"
 * (observed_at), using the registry rule in force at T. Every read is bounded before it starts: an
 * `as_of` read counts the events it would fold (observed at or before T, the count itself stopping
 * past the cap) and is refused, saying so, above `maxScanEvents`; then it folds the logs where they
 * cannot hold the event loop (`log-fold.ts`). History answers one page and a cursor. A store that
 * builds heavy answers where it reads them (`RenderedReads`: SQLite's read workers) answers the
 * `…Text` variants as finished bytes, so the event loop's share of such a read does not grow with
 * its size. Knows nothing of HTTP (the bytes are the answer module's the store was given).
 */
import type { Clock } from '../common/clock.ts';
import { invalidRequest } from '../common/errors.ts';
import type { Ticket } from '../common/light-first.ts';
import { letOthersRun } from '../common/time-slice.ts';
import { words } from '../common/words.ts';
import { type AnswerBytes, cutPage, type RenderedReads } from '../store/answer-text-port.ts';
import type { FactKey, FactStore, StoredEvent } from '../store/fact-store.ts';
import { distinctFacts, type FoldAnswer, type FoldQuery, type OffLoopFolds } from '../store/log-fold-port.ts';
import type { FactLogQuery, LogPosition } from '../store/log-reads.ts';
import type { PredicateDef } from '../store/registry-store.ts';
import type { Belief } from './fold.ts';
import { LogFold } from './log-fold.ts';
import { tenantOf } from './namespace.ts';
import type { Registry } from './registry.ts';
import type { RegistryBook } from './registry-book.ts';
import { normalizeSubject } from './values.ts';

/** What to recall. */
export interface RecallQuery {
  namespace: string;
  subject?: string;
  predicate?: string;
  /** Text search; when set, subject/predicate further filter the hits. */
  q?: string;
  /** Epoch ms. */
  asOf?: number;
  limit: number;
  minConfidence?: number;
  kind?: string;
  /** The light-lane ticket of the request reading (`common/light-first.ts`): heavy once a fold yields. */
  lane?: Ticket | null;
}

/** Longest accepted search text. */
export const MAX_QUERY = 512;

/** Most events one `as_of` read folds. */
export const MAX_SCAN_EVENTS = 20_000;

/** Events a history page holds unless asked for fewer or more. */
export const HISTORY_LIMIT = 100;

/** Most events one history page holds. */
export const MAX_HISTORY_LIMIT = 1000;

/**
 * Events per page of an `as_of` fold on the event loop (PostgreSQL, a store in memory): the loop is
 * given back between pages, so one stretch folds at most this many events.
 */
export const LOOP_FOLD_PAGE = 500;

/** A recall without `as_of` or search and at most this limit is answered on the loop: a worker's round trip costs more. */
const SHORT_RECALL = 100;

/** Which page of a fact's history: at most `limit` events after `after` (a `next` of an earlier page). */
export interface HistoryPage {
  /** @default 100 */
  limit?: number;
  /** The fold-order place of the last event of the page before. */
  after?: Omit<LogPosition, 'subject' | 'predicate'>;
}

/** 400 for an `as_of` read that would fold more than `max` events. */
function scanCap(max: number) {
  return invalidRequest(
    'as_of',
    `this read as of a time would fold more than ${max} events (the most one request may read); name a subject and predicate, search fewer words' matches with a lower limit, or read without as_of`,
  );
}

/** Read operations on memory. */
export class MemoryReader {
  readonly #store: FactStore;
  readonly #registries: RegistryBook;
  readonly #clock: Clock;
  readonly #maxScan: number;

  /** @param options.maxScanEvents most events one `as_of` read folds (@default 20000) */
  constructor(options: { store: FactStore; registries: RegistryBook; clock: Clock; maxScanEvents?: number }) {
    this.#store = options.store;
    this.#registries = options.registries;
    this.#clock = options.clock;
    this.#maxScan = options.maxScanEvents ?? MAX_SCAN_EVENTS;
  }

  /**
   * Current beliefs (or as of `asOf`) matching the query. Searches answer newest first.
   * Without `asOf` the store's "now" projection answers (no folding); with it the log is folded.
   */
  async recall(query: RecallQuery): Promise<Belief[]> {
    const { filters, terms } = await this.#resolve(query);
    if (query.asOf === undefined) {
      return terms ? this.#store.searchBeliefs({ ...filters, terms }) : this.#store.currentBeliefs(filters);
    }
    return this.#recallAsOf(query, filters, terms);
  }

  /**
   * `recall`'s answer as the JSON bytes of `{"beliefs": [...]}` (the store's answer module), built
   * where the store read it. Null when the store cannot (the caller maps `recall`'s beliefs itself),
   * and for a short recall (no `as_of` nor search, limit <= 100), which is cheaper on the loop.
   */
  async recallText(query: RecallQuery): Promise<AnswerBytes | null> {
    if (query.asOf === undefined && query.q === undefined && query.limit <= SHORT_RECALL) return null;
    const rendered = renderedReadsOf(this.#store);
    if (!rendered) return null;
    const offLoop = offLoopFoldsOf(this.#store);
    if (query.asOf !== undefined && !offLoop) return null;
    const { filters, terms } = await this.#resolve(query);
    if (query.asOf === undefined) {
      return terms ? rendered.searchBeliefs({ ...filters, terms }) : rendered.currentBeliefs(filters);
    }
    const answer = await rendered.foldFactLogs(await this.#foldQuery(query, filters, terms, offLoop));
    if (answer.capped) throw scanCap(this.#maxScan);
    return answer.body;
  }

  /** A recall's names resolved: the predicate by the rule in force at `asOf` (or now), the search's words. */
  async #resolve(query: RecallQuery) {
    const tenant = tenantOf(query.namespace);
    const registry = await this.#registries.at(tenant, query.asOf ?? this.#clock.now());
    const subject = query.subject === undefined ? undefined : normalizeSubject(query.subject);
    const predicate =
      query.predicate === undefined ? undefined : (await this.#readDef(tenant, registry, query.predicate)).name;
    const terms = query.q === undefined ? null : searchTerms(query.q);
    const filters = {
      namespace: query.namespace,
      subject,
      predicate,
      kind: query.kind,
      minConfidence: query.minConfidence,
      limit: query.limit,
    };
    return { filters, terms };
  }

  /**
   * The slow path: fold the facts' logs up to `asOf` with the rule of that time. A store that folds
   * off the loop (SQLite's read workers) runs the count, the reads and the fold in one go there and
   * sends back only the answer; otherwise (PostgreSQL, a store in memory) the logs are read and
   * folded here page by page, yielding to the event loop between pages.
   */
  async #recallAsOf(
    query: RecallQuery,
    f: { namespace: string; subject?: string; predicate?: string },
    terms: string[] | null,
  ): Promise<Belief[]> {
    const offLoop = offLoopFoldsOf(this.#store);
    const fold = await this.#foldQuery(query, f, terms, offLoop);
    const answer = offLoop ? await offLoop.foldFactLogs(fold) : await this.#foldHere(fold, query.lane ?? null);
    if (answer.capped) throw scanCap(this.#maxScan);
    return answer.beliefs;
  }

  /** The fold an `as_of` read runs: its facts, and the rule (cardinality) of each predicate at `asOf`. */
  async #foldQuery(
    query: RecallQuery,
    f: { namespace: string; subject?: string; predicate?: string },
    terms: string[] | null,
    offLoop: OffLoopFolds | null,
  ): Promise<FoldQuery> {
    const asOf = query.asOf as number;
    const groups = terms ? await this.#searchedFacts(query, f, terms, offLoop) : await this.#listedFacts(query, f);
    const tenant = tenantOf(query.namespace);
    const cardinalities: Record<string, 'single' | 'multi'> = {};
    for (const g of groups) {
      cardinalities[g.predicate] ??= await this.#registries.cardinalityOf(tenant, g.predicate, asOf);
    }
    return {
      namespace: query.namespace,
      groups,
      asOf,
      max: this.#maxScan,
      cardinalities,
      terms,
      minConfidence: query.minConfidence,
      kind: query.kind,
      limit: query.limit,
    };
  }

  /** `foldFactLogs` on this thread: counted first, then page by page, yielding between pages. */
  async #foldHere(q: FoldQuery, lane: Ticket | null): Promise<FoldAnswer> {
    // Bounded before it starts: counted (no further than the cap) before any event is read.
    const base = { namespace: q.namespace, groups: q.groups, asOf: q.asOf };
    if ((await this.#store.countFactEvents({ ...base, max: q.max })) > q.max) return { capped: true };
    const fold = new LogFold(q);
    let after: LogPosition | undefined;
    for (;;) {
      const page = await this.#store.factLog({ ...base, after, limit: LOOP_FOLD_PAGE });
      // Writes between pages may add events to the logs: still no further than the cap.
      if (!fold.add(page)) return { capped: true };
      if (page.length < LOOP_FOLD_PAGE) break;
      after = page[page.length - 1] as StoredEvent;
      await letOthersRun(lane); // the next page after other requests had their turn (light ones first)
    }
    return { capped: false, beliefs: fold.finish() };
  }

  /** The facts an `as_of` search folds: those with matching events (held or not), newest hit first. */
  async #searchedFacts(
    query: RecallQuery,
    f: { subject?: string; predicate?: string },
    terms: string[],
    offLoop: OffLoopFolds | null,
  ): Promise<FactKey[]> {
    const hits = Math.min(this.#maxScan, Math.max(500, query.limit * 20));
    const facts = offLoop
      ? await offLoop.searchFacts(query.namespace, terms, hits)
      : distinctFacts(await this.#store.searchEvents(query.namespace, terms, hits));
    return facts.filter(
      (k) =>
        (f.subject === undefined || k.subject === f.subject) &&
        (f.predicate === undefined || k.predicate === f.predicate),
    );
  }

  /** The facts an `as_of` recall folds: the one named, or the first `limit` matching (index seeks). */
  async #listedFacts(query: RecallQuery, f: { namespace: string; subject?: string; predicate?: string }) {
    if (f.subject !== undefined && f.predicate !== undefined) return [{ subject: f.subject, predicate: f.predicate }];
    const groups = await this.#store.factGroups({ ...f, limit: query.limit, maxSteps: this.#maxScan });
    if (!groups) throw scanCap(this.#maxScan);
    return groups;
  }

  /**
   * One page of the events of one (subject, predicate), oldest first in fold order.
   * @returns the events and where the next page starts (null after the last page)
   */
  async history(
    namespace: string,
    fact: { subject: string; predicate: string },
    page: HistoryPage = {},
  ): Promise<{ events: StoredEvent[]; next: Omit<LogPosition, 'subject' | 'predicate'> | null }> {
    const q = await this.#historyQuery(namespace, fact, page);
    // One more than asked: whether a next page exists is known without reading an empty one.
    return cutPage(await this.#store.factLog({ ...q, limit: q.limit + 1 }), q.limit);
  }

  /**
   * `history`'s answer as the JSON bytes of `{"events": [...], "next": …}` (the store's answer
   * module), built where the store read the page; null when the store cannot.
   */
  async historyText(
    namespace: string,
    fact: { subject: string; predicate: string },
    page: HistoryPage = {},
  ): Promise<AnswerBytes | null> {
    const rendered = renderedReadsOf(this.#store);
    if (!rendered) return null;
    return rendered.historyPage(await this.#historyQuery(namespace, fact, page));
  }

  /** The log read of one history page (`limit` = the page's size), the limit checked. */
  async #historyQuery(
    namespace: string,
    fact: { subject: string; predicate: string },
    page: HistoryPage,
  ): Promise<FactLogQuery> {
    const limit = page.limit ?? HISTORY_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_HISTORY_LIMIT) {
      throw invalidRequest('limit', `must be a whole number from 1 to ${MAX_HISTORY_LIMIT}`);
    }
    const tenant = tenantOf(namespace);
    const registry = await this.#registries.current(tenant);
    const def = await this.#readDef(tenant, registry, fact.predicate);
    const key = { subject: normalizeSubject(fact.subject), predicate: def.name };
    return { namespace, groups: [key], after: page.after && { ...key, ...page.after }, limit };
  }

  /** A predicate as named by a read: the rule in force, else any older version (it may have been removed). */
  async #readDef(tenant: string, registry: Registry, name: string): Promise<PredicateDef> {
    return (await this.#registries.ruleOf(tenant, name)) ?? registry.resolve(name, 'predicate');
  }
}

/** Splits search text into words (letters and digits); at least one is required. */
export function searchTerms(q: string): string[] {
  if (q.length > MAX_QUERY) throw invalidRequest('q', `must be at most ${MAX_QUERY} characters`);
  const terms = words(q);
  if (terms.length === 0) throw invalidRequest('q', 'must contain at least one word');
  return [...new Set(terms)].slice(0, 16);
}

/** The store's rendered reads when it offers them now (a SQLite store with running read workers). */
function renderedReadsOf(store: FactStore): RenderedReads | null {
  return store.renderedReads?.() ?? null;
}

/** The store's off-loop folds when it offers them now (a SQLite store with running read workers). */
function offLoopFoldsOf(store: FactStore): OffLoopFolds | null {
  return store.offLoopFolds?.() ?? null;
}
