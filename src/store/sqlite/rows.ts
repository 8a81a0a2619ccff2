/**
 * @module
 * Row <-> record mapping for the SQLite driver (column names are snake_case, records camelCase).
 */
import type { CurrentBelief, StoredEvent } from '../fact-store.ts';
import type { KeyRecord } from '../key-store.ts';

/** An `events` row. */
export interface EventRow {
  seq?: number;
  id: string;
  namespace: string;
  tenant: string;
  subject: string;
  predicate: string;
  value: string | null;
  value_key: string | null;
  retraction: number;
  kind: string | null;
  confidence: number;
  source: string | null;
  evidence: string | null;
  observed_at: number;
  recorded_at: number;
  actor_agent: string | null;
  actor_session: string | null;
  actor_key_id: string | null;
}

/** An `events` row joined with its `beliefs` row. */
export interface BeliefRow extends EventRow {
  belief_replaced: string;
}

/** A current belief from a joined row. */
export function rowToBelief(r: BeliefRow): CurrentBelief {
  return { event: rowToEvent(r), replaced: JSON.parse(r.belief_replaced) };
}

/** A `keys` row. */
export interface KeyRow {
  id: string;
  hash: string;
  tenant: string;
  agent: string | null;
  session: string | null;
  admin: number;
  note: string | null;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
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

export function keyFromRow(r: KeyRow): KeyRecord {
  return {
    id: r.id,
    hash: r.hash,
    tenant: r.tenant,
    agent: r.agent,
    session: r.session,
    admin: r.admin === 1,
    note: r.note,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    revokedAt: r.revoked_at,
  };
}

/** The columns of the keys table, in the order `keyValues` gives them (both stores insert with it). */
export const KEY_COLUMNS = 'id, hash, tenant, agent, session, admin, note, created_at, expires_at, revoked_at';

/** A key's values in `KEY_COLUMNS` order. */
export function keyValues(key: KeyRecord): unknown[] {
  return [
    key.id,
    key.hash,
    key.tenant,
    key.agent,
    key.session,
    key.admin ? 1 : 0,
    key.note,
    key.createdAt,
    key.expiresAt,
    key.revokedAt,
  ];
}
