/**
 * @module
 * The keys port of a `Store` (`store.ts`): API key records, only the hash of each secret kept. Used by
 * `auth/` (key service, bootstrap admin key) and the key routes; minting and verifying live in `auth/`.
 */

/** A stored API key; only the hash of its secret is kept. */
export interface KeyRecord {
  /** 16 hex chars. */
  id: string;
  /** sha256 hex of the secret part. */
  hash: string;
  tenant: string;
  /** Agent keys have an agent; admin keys have none. */
  agent: string | null;
  /** Pod or instance name, for a key minted for a workload. */
  session: string | null;
  /** True for an admin key (one without an agent). */
  admin: boolean;
  /** Free text shown in key lists. */
  note: string | null;
  /** Epoch ms. */
  createdAt: number;
  /** Epoch ms after which the key is refused; null for a key that never expires. */
  expiresAt: number | null;
  /** Epoch ms of its revocation; null while not revoked. */
  revokedAt: number | null;
}

/** API key records. All methods are safe to call concurrently. */
export interface KeyStore {
  /** Stores a new key; throws when its id is taken. */
  insertKey(key: KeyRecord): Promise<void>;
  /** The key of `id` (revoked and expired ones included), or null. */
  getKey(id: string): Promise<KeyRecord | null>;
  /** Keys of one tenant, or all when `tenant` is `*`. */
  listKeys(tenant: string): Promise<KeyRecord[]>;
  /** Deletes keys that expired before `before` (epoch ms). Returns how many. */
  deleteExpiredKeys(before: number): Promise<number>;
  /** Marks a key revoked; false when there is no such key. */
  revokeKey(id: string, at: number): Promise<boolean>;
}
