/**
 * @module
 * SQL of the PostgreSQL store that reads and writes facts, as functions over a client (a pool, or
 * the client of an open transaction): events appended with their index words and belief changes in
 * two statements, the heads of a whole batch in one. Arrays go in through `unnest`, so a
 * statement's cost in round trips does not grow with the batch.
 */
import type pg from 'pg';
import { type BeliefRow, type EventRow, eventToRow, rowToBelief, rowToEvent } from '../event-rows.ts';
import type { BeliefChange, FactHead, FactHeadRequest, FactKey, StoredEvent } from '../fact-store.ts';
import { indexWords } from '../index-words.ts';

/** Anything that runs a query: the pool or a transaction's client. */
export type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient;

/** The event columns (not `seq`, not `words`), `e.`-qualified; rows map with `event-rows.ts`. */
export const EVENT_COLUMNS = [
  'id',
  'namespace',
  'tenant',
  'subject',
  'predicate',
  'value',
  'value_key',
  'retraction',
  'kind',
  'confidence',
  'source',
  'evidence',
  'observed_at',
  'recorded_at',
  'actor_agent',
  'actor_session',
  'actor_key_id',
] as const;
export const E = EVENT_COLUMNS.map((c) => `e.${c}`).join(', ');

const TYPES: Record<(typeof EVENT_COLUMNS)[number], string> = {
  id: 'text',
  namespace: 'text',
  tenant: 'text',
  subject: 'text',
  predicate: 'text',
  value: 'text',
  value_key: 'text',
  retraction: 'smallint',
  kind: 'text',
  confidence: 'float8',
  source: 'text',
  evidence: 'text',
  observed_at: 'bigint',
  recorded_at: 'bigint',
  actor_agent: 'text',
  actor_session: 'text',
  actor_key_id: 'text',
};

/** `INSERT INTO events … SELECT … FROM unnest(…)` of `events` with params from `$first`, and its params. */
function eventsInsert(events: StoredEvent[], first: number): { sql: string; params: unknown[] } {
  const rows = events.map(eventToRow);
  const params: unknown[] = EVENT_COLUMNS.map((c) => rows.map((r) => r[c]));
  // Words hold letters and digits only, so a space-joined string carries the array through unnest.
  params.push(events.map((e) => [...new Set(indexWords(e))].join(' ')));
  const n = EVENT_COLUMNS.length;
  const unnest = [...EVENT_COLUMNS.map((c, i) => `$${first + i}::${TYPES[c]}[]`), `$${first + n}::text[]`].join(', ');
  const sql = `INSERT INTO events (${EVENT_COLUMNS.join(', ')}, words)
     SELECT ${EVENT_COLUMNS.map((c) => `u.${c}`).join(', ')}, string_to_array(u.words, ' ')
     FROM unnest(${unnest}) WITH ORDINALITY AS u(${EVENT_COLUMNS.join(', ')}, words, ord)
     ORDER BY u.ord`;
  return { sql, params };
}

/**
 * Inserts events in order (their `seq` follows the array), with their index words.
 * @param skipExisting an id already stored is skipped instead of failing
 * @returns how many rows were inserted
 */
export async function insertEvents(db: Queryable, events: StoredEvent[], skipExisting = false): Promise<number> {
  if (events.length === 0) return 0;
  const { sql, params } = eventsInsert(events, 1);
  const res = await db.query(`${sql} ${skipExisting ? 'ON CONFLICT (id) DO NOTHING' : ''}`, params);
  return res.rowCount ?? 0;
}

/** The net effect of a list of changes on each fact, applied in order (a later change of a fact wins). */
function netChanges(changes: BeliefChange[]) {
  const facts = new Map<
    string,
    { fact: [string, string, string]; whole: boolean; removed: Set<string>; added: Map<string, string> }
  >();
  for (const c of changes) {
    const k = `${c.namespace}\u0000${c.subject}\u0000${c.predicate}`;
    let f = facts.get(k);
    if (!f) {
      f = { fact: [c.namespace, c.subject, c.predicate], whole: false, removed: new Set(), added: new Map() };
      facts.set(k, f);
    }
    if (c.current) {
      f.whole = true;
      f.removed.clear();
      f.added.clear();
    }
    for (const id of c.remove ?? []) {
      f.added.delete(id);
      f.removed.add(id);
    }
    for (const b of [...(c.current ?? []), ...(c.add ?? [])]) f.added.set(b.eventId, JSON.stringify(b.replaced));
  }
  return [...facts.values()];
}

/**
 * Appends events and applies belief changes (see `BeliefChange`) in order, in at most two statements
 * whatever their number (a write's transaction pays a round trip per statement): the beliefs of facts
 * replaced whole and those removed are deleted in one, then the events are inserted and the added
 * beliefs with them in another. An added belief takes `observed_at` and `value_key` from its event
 * (inserted by the same statement, or stored before): a belief can only point at a stored event.
 */
export async function writeEventsAndBeliefs(
  db: Queryable,
  events: StoredEvent[],
  changes: BeliefChange[],
): Promise<void> {
  const net = netChanges(changes);
  // A fact replaced whole deletes all its beliefs (id NULL), a removal one of them.
  const deleted = [
    ...net.filter((f) => f.whole).map((f) => [...f.fact, null]),
    ...net.flatMap((f) => [...f.removed].map((id) => [...f.fact, id])),
  ];
  if (deleted.length > 0) {
    await db.query(
      `DELETE FROM beliefs b USING unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS f(ns, s, p, id)
       WHERE b.namespace = f.ns AND b.subject = f.s AND b.predicate = f.p AND (f.id IS NULL OR b.event_id = f.id)`,
      [0, 1, 2, 3].map((i) => deleted.map((r) => r[i])),
    );
  }
  const added = net.flatMap((f) => [...f.added].map(([id, replaced]) => [...f.fact, id, replaced]));
  if (added.length === 0) {
    await insertEvents(db, events);
    return;
  }
  const ins = events.length > 0 ? eventsInsert(events, 1) : null;
  const first = (ins?.params.length ?? 0) + 1;
  const f = (i: number, type = 'text[]') => `$${first + i}::${type}`;
  await db.query(
    `${ins ? `WITH ins AS (${ins.sql} RETURNING id, observed_at, value_key)` : ''}
     INSERT INTO beliefs (namespace, subject, predicate, observed_at, event_id, value_key, replaced)
     SELECT f.ns, f.s, f.p, ${ins ? 'coalesce(i.observed_at, e.observed_at)' : 'e.observed_at'}, f.id,
            ${ins ? 'CASE WHEN i.id IS NOT NULL THEN i.value_key ELSE e.value_key END' : 'e.value_key'}, f.r
     FROM unnest(${[0, 1, 2, 3, 4].map((i) => f(i)).join(', ')}) AS f(ns, s, p, id, r)
     ${ins ? 'LEFT JOIN ins i ON i.id = f.id' : ''}
     LEFT JOIN events e ON e.id = f.id
     WHERE ${ins ? 'i.id IS NOT NULL OR ' : ''}e.id IS NOT NULL
     ON CONFLICT (namespace, subject, predicate, observed_at, event_id) DO UPDATE SET replaced = EXCLUDED.replaced`,
    [...(ins?.params ?? []), ...[0, 1, 2, 3, 4].map((i) => added.map((r) => r[i]))],
  );
}

/**
 * The heads of several facts, in request order, in one statement (a write's transaction pays a round
 * trip per statement): each request's beliefs (all: a range of the primary key; one value's:
 * `beliefs_value`), or one row of NULLs when it has none, each row with the fact's newest
 * `observed_at` (`events_fact`) and its latest retraction withdrawing the value (`events_retractions`),
 * both read once per request.
 */
export async function readFactHeads(db: Queryable, requests: FactHeadRequest[]): Promise<FactHead[]> {
  if (requests.length === 0) return [];
  const beliefsOf = (test: string) =>
    `SELECT ${E}, b.replaced AS belief_replaced, b.observed_at AS b_at, b.event_id AS b_id
     FROM beliefs b JOIN events e ON e.id = b.event_id
     WHERE b.namespace = r.ns AND b.subject = r.s AND b.predicate = r.p AND ${test}`;
  const res = await db.query<BeliefRow & { i: number; last: number | null; last_retraction: number | null }>(
    `SELECT r.i, h.last, h.last_retraction, x.*
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS r(ns, s, p, vk, i)
     CROSS JOIN LATERAL (
       SELECT (SELECT max(observed_at) FROM events
               WHERE namespace = r.ns AND subject = r.s AND predicate = r.p) AS last,
              CASE WHEN r.vk IS NULL
                THEN (SELECT max(observed_at) FROM events
                      WHERE namespace = r.ns AND subject = r.s AND predicate = r.p AND retraction = 1)
                ELSE GREATEST(
                  (SELECT max(observed_at) FROM events WHERE namespace = r.ns AND subject = r.s
                     AND predicate = r.p AND retraction = 1 AND value_key IS NULL),
                  (SELECT max(observed_at) FROM events WHERE namespace = r.ns AND subject = r.s
                     AND predicate = r.p AND retraction = 1 AND value_key = r.vk))
              END AS last_retraction) h
     LEFT JOIN LATERAL (
       ${beliefsOf('r.vk IS NULL')}
       UNION ALL
       ${beliefsOf('b.value_key = r.vk')}
     ) x ON true
     ORDER BY r.i, x.b_at, x.b_id`,
    [
      requests.map((r) => r.namespace),
      requests.map((r) => r.subject),
      requests.map((r) => r.predicate),
      requests.map((r) => r.valueKey ?? null),
    ],
  );
  const heads: FactHead[] = requests.map(() => ({ beliefs: [], lastObservedAt: null, lastRetractionAt: null }));
  for (const row of res.rows) {
    const head = heads[row.i - 1] as FactHead;
    head.lastObservedAt = row.last;
    head.lastRetractionAt = row.last_retraction;
    if (row.id !== null) head.beliefs.push(rowToBelief(row));
  }
  return heads;
}

/** All events of the given groups of one namespace, grouped in request order, each in insertion order. */
export async function readGroupEvents(db: Queryable, namespace: string, groups: FactKey[]): Promise<StoredEvent[]> {
  if (groups.length === 0) return [];
  const res = await db.query<EventRow>(
    `SELECT ${E} FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS g(s, p, i)
     JOIN events e ON e.namespace = $1 AND e.subject = g.s AND e.predicate = g.p
     ORDER BY g.i, e.seq`,
    [namespace, groups.map((g) => g.subject), groups.map((g) => g.predicate)],
  );
  return res.rows.map(rowToEvent);
}

/** Which of `ids` are stored. */
export async function readExistingIds(db: Queryable, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const res = await db.query<{ id: string }>('SELECT id FROM events WHERE id = ANY($1::text[])', [ids]);
  return new Set(res.rows.map((r) => r.id));
}

/**
 * WHERE terms built with their parameters: `add('e.kind = ?', v)` pushes `v` onto `args` and the term
 * with `?` replaced by its `$n`. `where` is the list of terms so far.
 */
export function whereTerms(args: unknown[]): { where: string[]; add: (sql: string, v: unknown) => void } {
  const where: string[] = [];
  return {
    where,
    add: (sql, v) => {
      args.push(v);
      where.push(sql.replace('?', `$${args.length}`));
    },
  };
}
