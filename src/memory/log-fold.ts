/**
 * @module
 * The fold of an `as_of` read over several facts' logs, fed page by page in fold order, keeping only
 * the beliefs that answer the read (filtered, newest hit first for a search, at most `limit`). Pure and
 * synchronous, so the same code folds on the event loop (PostgreSQL, a store in memory: `recall.ts`,
 * yielding between pages) and inside a SQLite read worker (`store/sqlite/read-queries.ts`), which then
 * sends back only the few beliefs instead of thousands of events. The worker loads this file by its URL
 * (`LOG_FOLD_MODULE`, handed to the store by the CLI's driver table): the store never imports memory/.
 */
import type { StoredEvent } from '../store/fact-store.ts';
import type { FoldQuery, PageFold } from '../store/log-fold-port.ts';
import { type Belief, FactFold } from './fold.ts';
import { eventMatches } from './text-match.ts';

/** This module's URL: the `foldModule` a store loads where it folds (`store/log-fold-port.ts`). */
export const LOG_FOLD_MODULE: string = import.meta.url;

/** Folds pages of a `FoldQuery`'s logs (in fold order, fact after fact) into its answer. */
export class LogFold implements PageFold {
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
