/**
 * @module
 * Engine records -> JSON shapes of the HTTP contract (snake_case, ISO times, absent values as null).
 */
import type { AuthContext } from '../auth/auth-context.ts';
import type { RememberResult } from '../memory/engine.ts';
import type { Belief } from '../memory/fold.ts';
import type { KeyRecord, PredicateDef, RegistryVersion, StoredEvent } from '../store/store.ts';
import { iso } from './schemas/common.ts';

export function beliefJson(b: Belief) {
  const e = b.event;
  return {
    subject: e.subject,
    predicate: e.predicate,
    value: e.value,
    kind: e.kind,
    confidence: e.confidence,
    source: e.source,
    observed_at: iso(e.observedAt),
    event_id: e.id,
    replaced: b.replaced.map((r) => ({ value: r.value, observed_at: iso(r.observedAt) })),
  };
}

/** The full event line used by history and export (export adds nothing else: one shape). */
export function eventJson(e: StoredEvent) {
  return {
    id: e.id,
    namespace: e.namespace,
    subject: e.subject,
    predicate: e.predicate,
    value: e.value ?? null,
    value_key: e.valueKey,
    retraction: e.retraction,
    kind: e.kind,
    confidence: e.confidence,
    source: e.source,
    evidence: e.evidence,
    observed_at: iso(e.observedAt),
    recorded_at: iso(e.recordedAt),
    actor: { tenant: e.actor.tenant, agent: e.actor.agent, session: e.actor.session, key_id: e.actor.keyId },
  };
}

export function rememberJson(r: RememberResult) {
  return {
    stored: r.stored,
    already_known: r.alreadyKnown,
    superseded: r.superseded,
    event: r.event ? eventJson(r.event) : null,
  };
}

export function keyJson(k: KeyRecord) {
  return {
    id: k.id,
    tenant: k.tenant,
    agent: k.agent,
    session: k.session,
    namespace: k.agent === null ? null : `${k.tenant}:${k.agent}`,
    admin: k.admin,
    note: k.note,
    created_at: iso(k.createdAt),
    expires_at: iso(k.expiresAt),
    revoked_at: iso(k.revokedAt),
  };
}

export function whoamiJson(a: AuthContext) {
  return {
    key_id: a.keyId,
    tenant: a.tenant,
    agent: a.agent,
    session: a.session,
    namespace: a.namespace,
    admin: a.admin,
    expires_at: iso(a.expiresAt),
  };
}

export function predicateJson(d: PredicateDef) {
  return {
    name: d.name,
    cardinality: d.cardinality,
    value_type: d.valueType,
    allowed: d.allowed ?? null,
    aliases: d.aliases ?? [],
    description: d.description ?? null,
  };
}

/** An export line carrying one registry version (before its tenant's first event). */
export function registryVersionJson(v: RegistryVersion) {
  return {
    registry_version: {
      id: v.id,
      tenant: v.tenant,
      recorded_at: iso(v.recordedAt),
      predicates: v.predicates.map(predicateJson),
    },
  };
}
