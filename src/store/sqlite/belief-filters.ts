/**
 * @module
 * The WHERE terms of a belief query, shared by the SQLite store's recall and search statements.
 */
import type { BeliefQuery } from '../store.ts';

/** WHERE terms (over `beliefs b` joined with `events e`) of a belief query. */
export function beliefFilters(q: BeliefQuery): { where: string[]; args: unknown[] } {
  const where = ['b.namespace = ?'];
  const args: unknown[] = [q.namespace];
  if (q.subject !== undefined) {
    where.push('b.subject = ?');
    args.push(q.subject);
  }
  if (q.predicate !== undefined) {
    where.push('b.predicate = ?');
    args.push(q.predicate);
  }
  if (q.kind !== undefined) {
    where.push('e.kind = ?');
    args.push(q.kind);
  }
  if (q.minConfidence !== undefined) {
    where.push('e.confidence >= ?');
    args.push(q.minConfidence);
  }
  return { where, args };
}
