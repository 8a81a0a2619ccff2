/**
 * @module
 * Engine records -> JSON shapes of the HTTP contract (snake_case, ISO times, absent values as null).
 */
import type { z } from 'zod';
import type { AuthContext } from '../auth/auth-context.ts';
import type { RememberResult } from '../memory/engine.ts';
import type { Belief } from '../memory/fold.ts';
import type { StoredEvent } from '../store/fact-store.ts';
import type { KeyRecord } from '../store/key-store.ts';
import type { PredicateDef, RegistryVersion } from '../store/registry-store.ts';
import { iso } from './iso-time.ts';
import type { beliefAnswer, eventAnswer, rememberResultAnswer } from './schemas/memories.ts';

/** A value as stored: what remember accepted (string, number or boolean). */
type StoredValue = string | number | boolean;

export function beliefJson(b: Belief): z.output<typeof beliefAnswer> {
  const e = b.event;
  return {
    subject: e.subject,
    predicate: e.predicate,
    value: e.value as StoredValue,
    kind: e.kind,
    confidence: e.confidence,
    source: e.source,
    observed_at: iso(e.observedAt) as string,
    event_id: e.id,
    replaced: b.replaced.map((r) => ({ value: r.value as StoredValue, observed_at: iso(r.observedAt) as string })),
  };
}

/** The full event line used by history and export (export adds nothing else: one shape). */
/** The last time `isoOf` formatted: a batch's events share their times (recorded_at, mostly observed_at). */
let lastIso = { ms: Number.NaN, text: '' };

/** `iso(ms)` for an event's time, formatting each ms once while the same times repeat. */
function isoOf(ms: number): string {
  if (ms !== lastIso.ms) lastIso = { ms, text: iso(ms) as string };
  return lastIso.text;
}

export function eventJson(e: StoredEvent): z.output<typeof eventAnswer> {
  return {
    id: e.id,
    namespace: e.namespace,
    subject: e.subject,
    predicate: e.predicate,
    value: (e.value ?? null) as StoredValue | null,
    value_key: e.valueKey,
    retraction: e.retraction,
    kind: e.kind,
    confidence: e.confidence,
    source: e.source,
    evidence: e.evidence,
    observed_at: isoOf(e.observedAt),
    recorded_at: isoOf(e.recordedAt),
    actor: { tenant: e.actor.tenant, agent: e.actor.agent, session: e.actor.session, key_id: e.actor.keyId },
  };
}

export function rememberJson(r: RememberResult): z.output<typeof rememberResultAnswer> {
  return {
    stored: r.stored,
    already_known: r.alreadyKnown,
    superseded: r.superseded as StoredValue[],
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
