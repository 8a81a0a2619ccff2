/**
 * Builders shared by the `Store` conformance groups (and by driver tests): fresh tenants/namespaces,
 * complete events and keys, belief changes, and the small id extractors the assertions compare.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { newEventId } from '../../../src/common/ids.ts';
import type { BeliefChange, CurrentBelief, Replaced, SearchHit, StoredEvent } from '../../../src/store/fact-store.ts';
import type { KeyRecord } from '../../../src/store/key-store.ts';

/** A fresh tenant name, e.g. `t1a2b3c4d`. */
export function freshTenant(): string {
  return `t${randomUUID().slice(0, 8)}`;
}

/** A fresh namespace `t…:agent`. */
export function freshNamespace(agent = 'a'): string {
  return `${freshTenant()}:${agent}`;
}

/** The tenant part of a `tenant:agent` namespace. */
export function tenantOf(namespace: string): string {
  return namespace.slice(0, namespace.indexOf(':'));
}

/** A complete assertion event in `namespace`; `over` replaces any field. */
export function makeEvent(namespace: string, over: Partial<StoredEvent> = {}): StoredEvent {
  const tenant = tenantOf(namespace);
  const value = over.value === undefined ? 'blue' : over.value;
  return {
    id: newEventId(),
    namespace,
    tenant,
    subject: 'alice',
    predicate: 'favorite_color',
    value,
    valueKey: value === null ? null : String(value).toLowerCase(),
    retraction: false,
    kind: null,
    confidence: 1,
    source: null,
    evidence: null,
    observedAt: Date.UTC(2026, 0, 1),
    recordedAt: Date.UTC(2026, 0, 1),
    actor: { tenant, agent: 'a', session: 'pod-1', keyId: '0123456789abcdef' },
    ...over,
  };
}

/** A complete API key record of `tenant`; `over` replaces any field. */
export function makeKey(tenant: string, over: Partial<KeyRecord> = {}): KeyRecord {
  return {
    id: randomBytes(8).toString('hex'),
    hash: randomBytes(32).toString('hex'),
    tenant,
    agent: 'run-1',
    session: 'pod-1',
    admin: false,
    note: 'made by the conformance suite',
    createdAt: Date.UTC(2026, 0, 1),
    expiresAt: Date.UTC(2026, 1, 1),
    revokedAt: null,
    ...over,
  };
}

/** Ids of events (or of anything with an id), in order. */
export const ids = (events: readonly { id: string }[]): string[] => events.map((e) => e.id);
/** Event ids of search hits, in order. */
export const hitIds = (hits: readonly SearchHit[]): string[] => hits.map((h) => h.eventId);
/** The `subject/predicate` fact an event belongs to. */
export const groupOf = (e: StoredEvent): string => `${e.subject}/${e.predicate}`;
/** Event ids of current beliefs, in order. */
export const beliefIds = (beliefs: readonly CurrentBelief[]): string[] => beliefs.map((b) => b.event.id);

/** A change making `current` (events of one fact, each with what it replaced) the beliefs of that fact. */
export function changeOf(
  namespace: string,
  subject: string,
  predicate: string,
  current: readonly (StoredEvent | [StoredEvent, Replaced[]])[],
): BeliefChange {
  return {
    namespace,
    subject,
    predicate,
    current: current.map((c) =>
      Array.isArray(c) ? { eventId: c[0].id, replaced: c[1] } : { eventId: c.id, replaced: [] },
    ),
  };
}

/** Changes making every given assertion a current belief (replacing nothing), one change per fact. */
export function heldAll(events: readonly StoredEvent[]): BeliefChange[] {
  const facts = new Map<string, BeliefChange>();
  for (const e of events) {
    const key = JSON.stringify([e.namespace, e.subject, e.predicate]);
    let c = facts.get(key);
    if (!c) {
      c = { namespace: e.namespace, subject: e.subject, predicate: e.predicate, current: [] };
      facts.set(key, c);
    }
    c.current?.push({ eventId: e.id, replaced: [] });
  }
  return [...facts.values()];
}
