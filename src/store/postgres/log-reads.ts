/**
 * @module
 * The bounded log reads of the PostgreSQL store (`../log-reads.ts`) as functions over a client:
 * facts' logs page by page in fold order, capped counts, and the facts of a namespace by a loose
 * index scan. Each is one statement whose work is bounded by its limit, not by the facts' sizes.
 */
import { type EventRow, rowToEvent } from '../event-rows.ts';
import type { FactGroupQuery, FactLogQuery, LogCountQuery } from '../log-reads.ts';
import type { FactKey, StoredEvent } from '../store.ts';
import { E, type Queryable } from './queries.ts';

const LAST_MS = 9e15;

/**
 * A page of the groups' logs in fold order. The cursor's fact is read first on its own, its index
 * range (events_fact) starting at the cursor's ms; then the facts after it, each a LATERAL range with
 * the page's limit, so no fact is read past what the page can hold. Ids compare bytewise
 * (`COLLATE "C"`), as the fold compares them.
 */
export async function readFactLog(db: Queryable, q: FactLogQuery): Promise<StoredEvent[]> {
  const after = q.after;
  const asOf = q.asOf ?? LAST_MS;
  let rest = q.groups;
  const out: StoredEvent[] = [];
  if (after) {
    const start = rest.findIndex((g) => g.subject === after.subject && g.predicate === after.predicate);
    if (start < 0) return [];
    rest = rest.slice(start + 1);
    const first = await db.query<EventRow>(
      `SELECT ${E} FROM events e
       WHERE e.namespace = $1 AND e.subject = $2 AND e.predicate = $3 AND e.observed_at <= $4
         AND e.observed_at >= $5 AND (e.observed_at, e.retraction, e.id COLLATE "C") > ($5, $6, $7 COLLATE "C")
       ORDER BY e.observed_at, e.retraction, e.id COLLATE "C" LIMIT $8`,
      [
        q.namespace,
        after.subject,
        after.predicate,
        asOf,
        after.observedAt,
        after.retraction ? 1 : 0,
        after.id,
        q.limit,
      ],
    );
    for (const r of first.rows) out.push(rowToEvent(r));
  }
  const room = q.limit - out.length;
  if (rest.length === 0 || room <= 0) return out;
  const res = await db.query<EventRow>(
    `SELECT ${E} FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS g(s, p, i)
     CROSS JOIN LATERAL (
       SELECT * FROM events x
       WHERE x.namespace = $1 AND x.subject = g.s AND x.predicate = g.p AND x.observed_at <= $4
       ORDER BY x.observed_at, x.retraction, x.id COLLATE "C" LIMIT $5
     ) e
     ORDER BY g.i, e.observed_at, e.retraction, e.id COLLATE "C" LIMIT $5`,
    [q.namespace, rest.map((g) => g.subject), rest.map((g) => g.predicate), asOf, room],
  );
  for (const r of res.rows) out.push(rowToEvent(r));
  return out;
}

/** The groups' events (as of `asOf`), each group counted no further than the cap. */
export async function countFactLog(db: Queryable, q: LogCountQuery): Promise<number> {
  if (q.groups.length === 0) return 0;
  const res = await db.query<{ n: string | null }>(
    `SELECT sum(c.n) AS n FROM unnest($2::text[], $3::text[]) AS g(s, p)
     CROSS JOIN LATERAL (SELECT count(*) AS n FROM (SELECT 1 FROM events
       WHERE namespace = $1 AND subject = g.s AND predicate = g.p AND observed_at <= $4 LIMIT $5) x) c`,
    [q.namespace, q.groups.map((g) => g.subject), q.groups.map((g) => g.predicate), q.asOf ?? LAST_MS, q.max + 1],
  );
  return Math.min(Number(res.rows[0]?.n ?? 0), q.max + 1);
}

/** The first facts of a namespace by a loose index scan (a recursive seek per distinct fact). */
export async function readFactGroups(db: Queryable, q: FactGroupQuery): Promise<FactKey[] | null> {
  const res = await db.query<FactKey & { step: number }>(
    `WITH RECURSIVE g AS (
       (SELECT subject, predicate, 1 AS step FROM events
        WHERE namespace = $1 AND (subject, predicate) > ($2, '') ORDER BY subject, predicate LIMIT 1)
       UNION ALL
       SELECT n.subject, n.predicate, g.step + 1 FROM g CROSS JOIN LATERAL (
         SELECT subject, predicate FROM events
         WHERE namespace = $1 AND (subject, predicate) > (g.subject, g.predicate)
         ORDER BY subject, predicate LIMIT 1) n
       WHERE g.step <= $5 AND ($3::text IS NULL OR n.subject = $3)
     )
     SELECT subject, predicate, step FROM g
     WHERE step > $5 OR (($3::text IS NULL OR subject = $3) AND ($4::text IS NULL OR predicate = $4))
     LIMIT $6`,
    [q.namespace, q.subject ?? '', q.subject ?? null, q.predicate ?? null, q.maxSteps, q.limit],
  );
  // Rows come in seek order (the outer LIMIT stops the recursion); the row past maxSteps always shows.
  const within = res.rows.filter((r) => r.step <= q.maxSteps);
  if (within.length < q.limit && within.length < res.rows.length) return null;
  return within.map((r) => ({ subject: r.subject, predicate: r.predicate }));
}
