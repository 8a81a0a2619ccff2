/**
 * @module
 * The contract between the memory engine's `as_of` fold and a store that can run it where it reads
 * (SQLite: inside a read worker, so only the answer crosses to the event loop). The fold itself is
 * memory semantics (`memory/log-fold.ts`); a store gets it as a module to load (`foldModule`), never by
 * importing `memory/`, so drivers keep to their port and `common/`. Types and one helper, no logic.
 */
import type { CurrentBelief, FactKey, StoredEvent } from './fact-store.ts';

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
export type FoldAnswer = { capped: false; beliefs: CurrentBelief[] } | { capped: true };

/** A fold fed the logs of a `FoldQuery` page by page, in fold order (fact after fact). */
export interface PageFold {
  /** Folds the next page; false once more than `max` events were read (the read must be refused). */
  add(page: readonly StoredEvent[]): boolean;
  /** The answer after the last page. */
  finish(): CurrentBelief[];
}

/**
 * What a fold module (the `foldModule` a store is given: a file URL) exports: `LogFold`, a class
 * folding one `FoldQuery`. Loaded by the store where it folds (a worker thread).
 */
export interface FoldModule {
  LogFold: new (query: FoldQuery) => PageFold;
}

/** A store that can run a whole `as_of` fold where it does not hold the event loop. */
export interface OffLoopFolds {
  /**
   * The distinct facts with events matching every term (held or not), newest hit first, from the
   * newest `hits` matching events: `searchEvents` de-duplicated where it ran.
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
