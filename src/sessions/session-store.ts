/**
 * @module
 * The `SessionStore` interface: where session bindings (session key -> instance) are kept.
 * Only persistence: scheduling decisions are made by the gateway. Implemented by memory-store.ts
 * (and later Redis); every implementation must pass test/sessions/conformance.ts.
 */

/** What a session is doing, as the admin API shows it. */
export type SessionState = 'active' | 'idle' | 'paused';

/** One session bound to one instance. Times are epoch milliseconds. */
export interface SessionRecord {
  /** The session key (the affinity cookie's value). Secret-ish: never logged. */
  key: string;
  /** The Knative service name. */
  service: string;
  /** The instance the session is bound to for its life. */
  instance: string;
  /** Stable agent/claim name derived from service + key (see claim-name.ts); same across instances. */
  claim: string;
  /** Current state. */
  state: SessionState;
  /** When the session was bound (ms). */
  createdAt: number;
  /** When the last request of the session started or finished (ms). */
  lastActive: number;
  /** Absolute end of the session (ms), or null when the service has no `session-expiry`. */
  expiresAt: number | null;
}

/** Persistence of session bindings. All methods are safe to call concurrently. */
export interface SessionStore {
  /** The record of `key` in `service`, or undefined. */
  get(service: string, key: string): Promise<SessionRecord | undefined>;
  /** Creates or replaces the record (keyed by service + key). */
  put(record: SessionRecord): Promise<void>;
  /** Updates state and/or lastActive of an existing record; no-op when it does not exist. */
  update(service: string, key: string, patch: Partial<Pick<SessionRecord, 'state' | 'lastActive'>>): Promise<void>;
  /** Deletes the record; returns true when one existed. */
  delete(service: string, key: string): Promise<boolean>;
  /** All records, optionally of one service, ordered by createdAt then key. */
  list(service?: string): Promise<SessionRecord[]>;
  /** Releases connections; further calls may fail. Safe to call twice. */
  close(): Promise<void>;
}
