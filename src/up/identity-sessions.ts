/**
 * @module
 * Tells the local authority when a session takes an instance: the instance's sandbox then belongs to
 * the session's SandboxClaim (its stable claim name), as agent-sandbox does when a claim adopts a
 * warm-pool sandbox. Wraps any `SessionStore`; every binding the gateway makes passes through `put`.
 */
import type { LocalIdentityAuthority } from '../auth/local-authority/authority.ts';
import type { SessionRecord, SessionStore } from '../sessions/session-store.ts';

/** Wraps `store` so each stored binding claims its instance at the authority. */
export function withClaims(
  store: SessionStore,
  authority: LocalIdentityAuthority,
  namespaceOf: (service: string) => string,
): SessionStore {
  return {
    get: (service, key) => store.get(service, key),
    put(record: SessionRecord) {
      authority.claimInstance(namespaceOf(record.service), record.instance, record.claim);
      return store.put(record);
    },
    update: (service, key, patch) => store.update(service, key, patch),
    delete: (service, key) => store.delete(service, key),
    list: (service) => store.list(service),
    close: () => store.close(),
  };
}
