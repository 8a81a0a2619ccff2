/**
 * @module
 * The lifecycle port of a `Store` (`store.ts`): which driver it is, readiness, closing, and the
 * changes other replicas made (so caches follow). Used by the ops routes, the server's wiring and the CLI.
 */

/**
 * What another replica changed, told by the store so this replica's caches follow (PostgreSQL:
 * LISTEN/NOTIFY). `resync`: changes may have been missed (the channel dropped): flush every cache.
 */
export type StoreChange =
  | { kind: 'key_revoked'; id: string }
  | { kind: 'registry'; tenant: string }
  | { kind: 'purged'; namespace: string }
  | { kind: 'resync' };

/** A store's driver name, readiness, change feed and shutdown. */
export interface StoreLifecycle {
  /** Driver name, e.g. `sqlite`. */
  readonly kind: string;
  /**
   * Tells `listener` what other replicas changed (key revocations, registry versions, purges), when
   * the store can (absent: one replica per store, nothing to tell).
   * @returns a function that stops the listening
   */
  subscribe?(listener: (change: StoreChange) => void): () => void;
  /** Throws when the store cannot serve (readiness). */
  ping(): Promise<void>;
  /** Closes cleanly; repeat calls are safe. */
  close(): Promise<void>;
}
