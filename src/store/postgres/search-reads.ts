/**
 * @module
 * Reads of the PostgreSQL store's "now" projection and its search: current beliefs, beliefs by
 * text search (fold after search) and matching events, as functions over a client. Called by
 * `PostgresStore`; writes are in `queries.ts`.
 */

import { type BeliefRow, rowToBelief } from '../event-rows.ts';
import type { BeliefQuery, CurrentBelief, SearchHit } from '../fact-store.ts';
import { indexTerms } from '../index-words.ts';
import { E, type Queryable, whereTerms } from './queries.ts';

/** Current beliefs of a query, by subject, predicate, observed time and event id. */
export async function readCurrentBeliefs(db: Queryable, q: BeliefQuery): Promise<CurrentBelief[]> {
  const args: unknown[] = [];
  const where = beliefWhere(q, args);
  args.push(q.limit);
  const res = await db.query<BeliefRow>(
    `SELECT ${E}, b.replaced AS belief_replaced FROM beliefs b JOIN events e ON e.id = b.event_id
     WHERE ${where} ORDER BY b.subject, b.predicate, b.observed_at, b.event_id LIMIT $${args.length}`,
    args,
  );
  return res.rows.map(rowToBelief);
}

/** Beliefs still held whose event matches all `terms`, newest written first. */
export async function readSearchBeliefs(db: Queryable, q: BeliefQuery & { terms: string[] }): Promise<CurrentBelief[]> {
  if (q.terms.length === 0) return [];
  const args: unknown[] = [];
  const where = beliefWhere(q, args);
  args.push(indexTerms(q.namespace, q.terms), q.limit);
  // Matches, then only those still believed (fold after search), newest first. The belief is looked
  // up per match (LATERAL ... LIMIT 1, which the planner cannot turn into a join of whole tables):
  // for a common word PostgreSQL then walks events newest first and stops at the limit, for a rare
  // one it takes the GIN index's few matches; a hash join with every belief of the table took
  // 70-120 ms at 10^5 events (EXPLAIN ANALYZE), the lookups 0.1-7 ms.
  const res = await db.query<BeliefRow>(
    `SELECT ${E}, b.replaced AS belief_replaced FROM events e
     JOIN LATERAL (SELECT b.namespace, b.subject, b.predicate, b.replaced FROM beliefs b
       WHERE b.namespace = e.namespace AND b.subject = e.subject AND b.predicate = e.predicate
         AND b.observed_at = e.observed_at AND b.event_id = e.id LIMIT 1) b ON true
     WHERE e.words @> $${args.length - 1}::text[] AND e.namespace = $1 AND ${where}
     ORDER BY e.seq DESC LIMIT $${args.length}`,
    args,
  );
  return res.rows.map(rowToBelief);
}

/** Events of one namespace matching all `terms` (held or not), newest written first. */
export async function readSearchEvents(
  db: Queryable,
  namespace: string,
  terms: string[],
  limit: number,
): Promise<SearchHit[]> {
  if (terms.length === 0) return [];
  const res = await db.query<SearchHit>(
    `SELECT id AS "eventId", subject, predicate FROM events
     WHERE words @> $1::text[] AND namespace = $2 ORDER BY seq DESC LIMIT $3`,
    [indexTerms(namespace, terms), namespace, limit],
  );
  return res.rows;
}

/** WHERE terms (over `beliefs b` joined with `events e`) of a belief query; `args` grows with them. */
export function beliefWhere(q: BeliefQuery, args: unknown[]): string {
  const { where, add } = whereTerms(args);
  add('b.namespace = ?', q.namespace);
  if (q.subject !== undefined) add('b.subject = ?', q.subject);
  if (q.predicate !== undefined) add('b.predicate = ?', q.predicate);
  if (q.kind !== undefined) add('e.kind = ?', q.kind);
  if (q.minConfidence !== undefined) add('e.confidence >= ?', q.minConfidence);
  return where.join(' AND ');
}
