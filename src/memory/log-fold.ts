/**
 * @module
 * The fold of an `as_of` read over several facts' logs, fed page by page in fold order, keeping only
 * the beliefs that answer the read (filtered, newest hit first for a search, at most `limit`). Pure and
 * synchronous, so the same code folds on the event loop (PostgreSQL, a store in memory: `recall.ts`,
 * yielding between pages) and inside a SQLite read worker (`store/sqlite/read-queries.ts`), which then
 * sends back only the few beliefs instead of thousands of events.
 */
import type { FactKey, StoredEvent } from '../store/store.ts';
import { type Belief, FactFold } from './fold.ts';
import { eventMatches } from './text-match.ts';

/** Events per page of an `as_of` read's logs. */
export const LOG_PAGE = 2000;

/** An `as_of` read, resolved: which facts, with the rule (cardinality) of each predicate at `asOf`. */
export interface FoldQuery {
  namespace: string;
  /** The facts to fold, in this order. */
  groups: FactKey[];
  /** Epoch ms: only events observed at or before it. */
  asOf: number;
  /** Most events the read may fold; past it the answer is `{ capped: true }`. */
  max: number;
  /** Cardinality at `asOf` of every predicate of `groups`. */
  cardinalities: Record<string, 'single' | 'multi'>;
  /** A search's words: a belief is kept only when it matches them all (newest first); null for a recall. */
  terms: string[] | null;
  minConfidence?: number;
  kind?: string;
  /** Most beliefs answered. */
  limit: number;
}

/** What an `as_of` fold answers: the beliefs, or that it would fold more than `max` events. */
export type FoldAnswer = { capped: false; beliefs: Belief[] } | { capped: true };

/** A store that can run a whole `as_of` fold where it does not hold the event loop. */
export interface OffLoopFolds {
  /**
   * The distinct facts with events matching every term (held or not), newest hit first, from the
   * newest `hits` matching events: `Store.searchEvents` de-duplicated where it ran.
   */
  searchFacts(namespace: string, terms: string[], hits: number): Promise<FactKey[]>;
  /** Counts (refusing past `max` before reading), reads and folds the logs; one consistent snapshot. */
  foldFactLogs(query: FoldQuery): Promise<FoldAnswer>;
}

/** The facts of `hits` (newest first), each once, in the order of its newest hit. */
export function distinctFacts(hits: readonly FactKey[]): FactKey[] {
  const keys = new Map<string, FactKey>();
  for (const h of hits) {
    const k = `${h.subject}\u0000${h.predicate}`;
    if (!keys.has(k)) keys.set(k, { subject: h.subject, predicate: h.predicate });
  }
  return [...keys.values()];
}

/** Folds pages of a `FoldQuery`'s logs (in fold order, fact after fact) into its answer. */
export class LogFold {
  readonly #q: FoldQuery;
  readonly #out: Belief[] = [];
  #fact: { key: string; fold: FactFold } | null = null;
  /** Events folded so far. */
  read = 0;

  constructor(query: FoldQuery) {
    this.#q = query;
  }

  /**
   * Folds the next page.
   * @returns false once more than `max` events were read (the read must be refused)
   */
  add(page: readonly StoredEvent[]): boolean {
    this.read += page.length;
    if (this.read > this.#q.max) return false;
    for (const e of page) {
      const key = `${e.subject}\u0000${e.predicate}`;
      if (this.#fact?.key !== key) {
        if (this.#fact) this.#keep(this.#fact.fold.beliefs());
        this.#fact = { key, fold: new FactFold(this.#q.cardinalities[e.predicate] ?? 'multi') };
      }
      this.#fact.fold.add(e);
    }
    return true;
  }

  /** The answer after the last page: kept beliefs, a search's newest first, at most `limit`. */
  finish(): Belief[] {
    if (this.#fact) this.#keep(this.#fact.fold.beliefs());
    this.#fact = null;
    const out = this.#out;
    if (this.#q.terms) out.sort((a, b) => (a.event.id < b.event.id ? 1 : a.event.id > b.event.id ? -1 : 0));
    return out.slice(0, this.#q.limit);
  }

  #keep(beliefs: Belief[]): void {
    const { terms, minConfidence, kind } = this.#q;
    for (const b of beliefs) {
      // a search answers with what was believed: a hit on a superseded or retracted value is dropped
      if (terms && !eventMatches(b.event, terms)) continue;
      if (minConfidence !== undefined && b.event.confidence < minConfidence) continue;
      if (kind !== undefined && b.event.kind !== kind) continue;
      this.#out.push(b);
    }
  }
}
