/**
 * @module
 * WHERE terms of the SQLite store's queries: `conditions` keeps the terms whose value is given, and
 * `beliefFilters` is a belief query's (shared by the recall and search statements).
 */
import type { BeliefQuery } from '../fact-store.ts';

/** The terms (`col = ?`, `id > ?`, …) whose value is not undefined, with their args in the same order. */
export function conditions(terms: readonly [string, unknown][]): { where: string[]; args: unknown[] } {
  const used = terms.filter(([, value]) => value !== undefined);
  return { where: used.map(([term]) => term), args: used.map(([, value]) => value) };
}

/** WHERE terms (over `beliefs b` joined with `events e`) of a belief query. */
export function beliefFilters(q: BeliefQuery): { where: string[]; args: unknown[] } {
  return conditions([
    ['b.namespace = ?', q.namespace],
    ['b.subject = ?', q.subject],
    ['b.predicate = ?', q.predicate],
    ['e.kind = ?', q.kind],
    ['e.confidence >= ?', q.minConfidence],
  ]);
}
