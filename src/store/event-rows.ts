/**
 * @module
 * Row <-> record mapping of the `events` and `beliefs` tables, shared by the SQLite and PostgreSQL
 * drivers (both lay the columns out alike: snake_case columns, camelCase records, JSON text values).
 */
import type { CurrentBelief, StoredEvent } from './fact-store.ts';

/** An `events` row. */
export interface EventRow {
  /** Insertion order, set by the database; absent on a row about to be inserted. */
  seq?: number;
  id: string;
  namespace: string;
  tenant: string;
  subject: string;
  predicate: string;
  /** The value as JSON text; null for a blanket retraction. */
  value: string | null;
  value_key: string | null;
  /** 1 for a retraction, 0 for an assertion. */
  retraction: number;
  kind: string | null;
  confidence: number;
  source: string | null;
  evidence: string | null;
  /** Epoch ms. */
  observed_at: number;
  /** Epoch ms. */
  recorded_at: number;
  actor_agent: string | null;
  actor_session: string | null;
  actor_key_id: string | null;
}

/** An `events` row joined with its `beliefs` row. */
export interface BeliefRow extends EventRow {
  /** JSON text of the `Replaced` list. */
  belief_replaced: string;
}

/** A current belief from a joined row. */
export function rowToBelief(r: BeliefRow): CurrentBelief {
  return { event: rowToEvent(r), replaced: JSON.parse(r.belief_replaced) };
}

export function eventToRow(e: StoredEvent): EventRow {
  return {
    id: e.id,
    namespace: e.namespace,
    tenant: e.tenant,
    subject: e.subject,
    predicate: e.predicate,
    value: e.value === null || e.value === undefined ? null : JSON.stringify(e.value),
    value_key: e.valueKey,
    retraction: e.retraction ? 1 : 0,
    kind: e.kind,
    confidence: e.confidence,
    source: e.source,
    evidence: e.evidence,
    observed_at: e.observedAt,
    recorded_at: e.recordedAt,
    actor_agent: e.actor.agent,
    actor_session: e.actor.session,
    actor_key_id: e.actor.keyId,
  };
}

export function rowToEvent(r: EventRow): StoredEvent {
  return {
    id: r.id,
    namespace: r.namespace,
    tenant: r.tenant,
    subject: r.subject,
    predicate: r.predicate,
    value: r.value === null ? null : JSON.parse(r.value),
    valueKey: r.value_key,
    retraction: r.retraction === 1,
    kind: r.kind,
    confidence: r.confidence,
    source: r.source,
    evidence: r.evidence,
    observedAt: r.observed_at,
    recordedAt: r.recorded_at,
    actor: { tenant: r.tenant, agent: r.actor_agent, session: r.actor_session, keyId: r.actor_key_id },
  };
}
