/**
 * @module
 * The statements of the SQLite store's fact writes: one event row (its FTS row returned, to be queued
 * once the transaction committed) and belief-projection changes. Run inside the store's transactions.
 */
import type Database from 'better-sqlite3';
import { eventToRow } from '../event-rows.ts';
import type { BeliefChange, StoredEvent } from '../fact-store.ts';
import { ftsBody } from './fts.ts';
import type { FtsSource } from './fts-queue.ts';

type Sql = (text: string) => Database.Statement;

/** Inserts one event; returns its FTS row for the caller to queue after commit. */
export function insertEvent(sql: Sql, e: StoredEvent): FtsSource {
  const info = sql(
    `INSERT INTO events (id, namespace, tenant, subject, predicate, value, value_key, retraction, kind,
       confidence, source, evidence, observed_at, recorded_at, actor_agent, actor_session, actor_key_id)
     VALUES (@id, @namespace, @tenant, @subject, @predicate, @value, @value_key, @retraction, @kind,
       @confidence, @source, @evidence, @observed_at, @recorded_at, @actor_agent, @actor_session, @actor_key_id)`,
  ).run(eventToRow(e));
  return { seq: Number(info.lastInsertRowid), body: ftsBody(e) };
}

/** Applies belief-projection changes: replace a fact's current beliefs, remove some, add some. */
export function applyBeliefChanges(sql: Sql, changes: BeliefChange[]): void {
  const delFact = sql('DELETE FROM beliefs WHERE namespace = ? AND subject = ? AND predicate = ?');
  // Within the fact's key range: the table is clustered by fact, not by event id.
  const delOne = sql('DELETE FROM beliefs WHERE namespace = ? AND subject = ? AND predicate = ? AND event_id = ?');
  // value_key and observed_at come from the event row: a belief can only point at a stored event.
  const ins = sql(
    `INSERT OR REPLACE INTO beliefs (event_id, namespace, subject, predicate, value_key, observed_at, replaced)
     SELECT id, ?, ?, ?, value_key, observed_at, ? FROM events WHERE id = ?`,
  );
  for (const c of changes) {
    if (c.current) delFact.run(c.namespace, c.subject, c.predicate);
    for (const id of c.remove ?? []) delOne.run(c.namespace, c.subject, c.predicate, id);
    for (const b of [...(c.current ?? []), ...(c.add ?? [])]) {
      ins.run(c.namespace, c.subject, c.predicate, JSON.stringify(b.replaced), b.eventId);
    }
  }
}
