/**
 * @module
 * Key lifecycle for one server replica: mint, verify (with a per-replica cache of key records),
 * revoke (refused at once on this replica; other replicas drop the entry when the store tells them,
 * see `forget`, and at the latest when it expires).
 * Called by the auth plugin and the key routes.
 */
import type { Clock } from '../common/clock.ts';
import { TetherError, unauthenticated } from '../common/errors.ts';
import type { KeyRecord, KeyStore } from '../store/key-store.ts';
import { type AuthContext, contextOf } from './auth-context.ts';
import { type MintKeyOptions, mintKey, parseKey, secretMatches } from './keys.ts';

/**
 * The note of a key minted by a workload-token exchange ends with `claim <uid>`: the uid of the SandboxClaim
 * the pod belonged to, so the key can be revoked when that claim is deleted (no store schema change needed).
 */
export function workloadKeyNote(tenant: string, serviceAccount: string, pod: string, claimUid: string): string {
  return `workload ${tenant}/${serviceAccount} pod ${pod} claim ${claimUid}`;
}

/** The claim uid in a workload key's note, or null for other keys. */
export function claimUidOf(note: string | null): string | null {
  return note === null ? null : (/^workload \S+ pod \S+ claim (\S+)$/.exec(note)?.[1] ?? null);
}

/** Options for `KeyService`. */
export interface KeyServiceOptions {
  store: KeyStore;
  clock: Clock;
  /** How long a key record is trusted without reading the store again, ms. @default 30000 */
  cacheTtlMs?: number;
  /** Most cached records. @default 100000 */
  cacheSize?: number;
}

/** Counters for /metrics. */
export interface KeyCacheStats {
  hits: number;
  misses: number;
}

/** Mints, verifies and revokes keys. */
export class KeyService {
  readonly #store: KeyStore;
  readonly #clock: Clock;
  readonly #ttl: number;
  readonly #size: number;
  readonly #cache = new Map<string, { record: KeyRecord; until: number }>();
  /**
   * Bumped by every invalidation (revoke, forget, flush). A read of the store that was in flight across
   * one may hold the record from before a revocation: it answers its own request but is not cached, or
   * the revoked key would pass here for a whole TTL.
   */
  #invalidations = 0;
  readonly stats: KeyCacheStats = { hits: 0, misses: 0 };

  constructor(options: KeyServiceOptions) {
    const ttl = options.cacheTtlMs ?? 30_000;
    if (!(ttl >= 0)) throw new Error(`Cannot create key service as 'cacheTtlMs' must be >= 0: got ${ttl}`);
    this.#store = options.store;
    this.#clock = options.clock;
    this.#ttl = ttl;
    this.#size = options.cacheSize ?? 100_000;
  }

  /** Mints and stores a key; returns the key text (shown once) and its record. */
  async mint(options: Omit<MintKeyOptions, 'now'>): Promise<{ key: string; record: KeyRecord }> {
    const minted = mintKey({ ...options, now: this.#clock.now() });
    await this.#store.insertKey(minted.record);
    return minted;
  }

  /**
   * Checks a bearer key.
   * @throws {TetherError} 401 `unauthenticated` (malformed, unknown, wrong secret), `key_expired`, `key_revoked`.
   */
  async verify(key: string): Promise<AuthContext> {
    const parsed = parseKey(key);
    if (!parsed) throw unauthenticated('malformed key: expected tth_<16 hex>_<64 hex>');
    const record = await this.#lookup(parsed.id);
    if (!record || !secretMatches(parsed.secret, record.hash)) throw unauthenticated('unknown key');
    if (record.revokedAt !== null) throw new TetherError('key_revoked', 'this key was revoked');
    if (record.expiresAt !== null && record.expiresAt <= this.#clock.now()) {
      throw new TetherError('key_expired', 'this key has expired; exchange your workload token again');
    }
    return contextOf(record);
  }

  /**
   * Revokes the live workload keys of `tenant` (keys minted by a token exchange, which know their claim's uid)
   * that `pick` selects. Returns the revoked ids.
   */
  async revokeWorkloadKeys(
    tenant: string,
    pick: (k: { agent: string | null; claimUid: string; createdAt: number }) => boolean,
  ): Promise<string[]> {
    const now = this.#clock.now();
    const revoked: string[] = [];
    for (const k of await this.#store.listKeys(tenant)) {
      const claimUid = claimUidOf(k.note);
      if (claimUid === null || k.revokedAt !== null || (k.expiresAt !== null && k.expiresAt <= now)) continue;
      if (!pick({ agent: k.agent, claimUid, createdAt: k.createdAt })) continue;
      if (await this.revoke(k.id)) revoked.push(k.id);
    }
    return revoked;
  }

  /** Tenants that hold live workload keys (the namespaces whose claims must be watched). */
  async workloadTenants(): Promise<string[]> {
    const now = this.#clock.now();
    const tenants = new Set<string>();
    for (const k of await this.#store.listKeys('*')) {
      if (claimUidOf(k.note) !== null && k.revokedAt === null && (k.expiresAt === null || k.expiresAt > now)) {
        tenants.add(k.tenant);
      }
    }
    return [...tenants].sort();
  }

  /** Revokes a key; this replica refuses it at once. False when there is no such key. */
  async revoke(id: string): Promise<boolean> {
    const ok = await this.#store.revokeKey(id, this.#clock.now());
    this.forget(id);
    return ok;
  }

  /** Drops the cached record of key `id` (another replica revoked it). */
  forget(id: string): void {
    this.#invalidations++;
    this.#cache.delete(id);
  }

  /** Drops every cached record (changes may have been missed). */
  flush(): void {
    this.#invalidations++;
    this.#cache.clear();
  }

  async #lookup(id: string): Promise<KeyRecord | null> {
    const now = this.#clock.now();
    const hit = this.#cache.get(id);
    if (hit && hit.until > now) {
      this.stats.hits++;
      return hit.record;
    }
    this.stats.misses++;
    const seen = this.#invalidations;
    const record = await this.#store.getKey(id);
    // Unknown ids are not cached: a key minted a moment ago on another replica must work here too.
    if (record === null || seen !== this.#invalidations) return record;
    if (this.#cache.size >= this.#size) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
    this.#cache.set(id, { record, until: now + this.#ttl });
    return record;
  }
}
