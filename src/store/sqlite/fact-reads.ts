/**
 * @module
 * Reads of facts on the store's main connection: a fact's head (its beliefs, last observation and last
 * retraction, what the writer plans a statement with) and the light per-fact event reads. Heavy reads go to the
 * read pool instead (read-queries.ts). Called by SqliteStore, inside its read transaction where it has one.
 */
import type Database from 'better-sqlite3';
import { type BeliefRow, type EventRow, rowToBelief, rowToEvent } from '../event-rows.ts';
import type { FactHead, FactHeadRequest, FactKey, FactQuery, StoredEvent } from '../fact-store.ts';
import { conditions } from './belief-filters.ts';

/** The store's cached statement of a SQL text. */
export type Sql = (text: string) => Database.Statement;

/**
 * A fact's last observation, its last retraction (of any value, or of `valueKey` and of all values:
 * events_retractions seeks each) and whether it is big: one statement, so a writer's head is two calls
 * into SQLite rather than five.
 */
const FACT = 'namespace = ? AND subject = ? AND predicate = ?';
const TIMES = `SELECT
  (SELECT max(observed_at) FROM events WHERE ${FACT}) AS last,
  (SELECT max(observed_at) FROM events WHERE ${FACT} AND retraction = 1 AND value_key IS NULL) AS blanket,
  (SELECT max(observed_at) FROM events WHERE ${FACT} AND retraction = 1 AND value_key = ?) AS own,
  EXISTS (SELECT 1 FROM big_facts WHERE ${FACT}) AS big`;
const TIMES_ALL = `SELECT
  (SELECT max(observed_at) FROM events WHERE ${FACT}) AS last,
  (SELECT max(observed_at) FROM events WHERE ${FACT} AND retraction = 1) AS retracted`;

/** One fact's head: its current beliefs (of one value when `valueKey` is given) and its last times. */
export function readFactHead(sql: Sql, { namespace, subject, predicate, valueKey }: FactHeadRequest): FactHead {
  // All beliefs: one range of the clustered table, in its own order. One value's: in a fact of more than
  // 64 beliefs, big_fact_values (009-big-fact-values.sql); in a smaller one, that range, tested per row.
  const select = 'SELECT e.*, b.replaced AS belief_replaced FROM beliefs b JOIN events e ON e.id = b.event_id';
  const fact = 'b.namespace = ? AND b.subject = ? AND b.predicate = ?';
  const f = [namespace, subject, predicate];
  let rows: unknown[];
  let lastObservedAt: number | null;
  let lastRetractionAt: number | null;
  if (valueKey === undefined || valueKey === null) {
    rows = sql(`${select} WHERE ${fact} ORDER BY b.observed_at, b.event_id`).all(...f);
    const t = sql(TIMES_ALL).get(...f, ...f) as { last: number | null; retracted: number | null };
    lastObservedAt = t.last;
    lastRetractionAt = t.retracted;
  } else {
    const t = sql(TIMES).get(...f, ...f, ...f, valueKey, ...f) as {
      last: number | null;
      blanket: number | null;
      own: number | null;
      big: number;
    };
    lastObservedAt = t.last;
    lastRetractionAt = maxOf(t.blanket, t.own);
    rows =
      t.big === 0
        ? sql(`${select} WHERE ${fact} AND b.value_key = ? ORDER BY b.observed_at, b.event_id`).all(...f, valueKey)
        : sql(
            `SELECT e.*, b.replaced AS belief_replaced FROM big_fact_values v
             JOIN beliefs b ON b.namespace = v.namespace AND b.subject = v.subject AND b.predicate = v.predicate
               AND b.observed_at = v.observed_at AND b.event_id = v.event_id
             JOIN events e ON e.id = b.event_id
             WHERE v.namespace = ? AND v.subject = ? AND v.predicate = ? AND v.value_key = ?
             ORDER BY v.observed_at, v.event_id`,
          ).all(...f, valueKey);
  }
  return { beliefs: (rows as BeliefRow[]).map(rowToBelief), lastObservedAt, lastRetractionAt };
}

/** The (namespace, subject) pairs of a tenant holding `predicate`. */
export function readFactKeys(sql: Sql, tenant: string, predicate: string): { namespace: string; subject: string }[] {
  return sql('SELECT DISTINCT namespace, subject FROM events WHERE tenant = ? AND predicate = ?').all(
    tenant,
    predicate,
  ) as { namespace: string; subject: string }[];
}

/** The events of the facts `query` names (at most `maxGroups` facts), in fold order per fact. */
export function readFactEvents(sql: Sql, query: FactQuery): StoredEvent[] {
  if (query.subject !== undefined && query.predicate !== undefined) {
    return readGroupEvents(sql, query.namespace, [{ subject: query.subject, predicate: query.predicate }]);
  }
  const { where, args } = conditions([
    ['namespace = ?', query.namespace],
    ['subject = ?', query.subject],
    ['predicate = ?', query.predicate],
  ]);
  const groups = sql(
    `SELECT DISTINCT subject, predicate FROM events WHERE ${where.join(' AND ')} ORDER BY subject, predicate LIMIT ?`,
  ).all(...args, query.maxGroups) as FactKey[];
  return readGroupEvents(sql, query.namespace, groups);
}

/** Every event of each fact in `groups`, by seq. */
export function readGroupEvents(sql: Sql, namespace: string, groups: FactKey[]): StoredEvent[] {
  const stmt = sql('SELECT * FROM events WHERE namespace = ? AND subject = ? AND predicate = ? ORDER BY seq');
  const out: StoredEvent[] = [];
  for (const g of groups) {
    for (const row of stmt.all(namespace, g.subject, g.predicate) as EventRow[]) out.push(rowToEvent(row));
  }
  return out;
}

function maxOf(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.max(a, b);
}
