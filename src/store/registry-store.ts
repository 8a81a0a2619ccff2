/**
 * @module
 * The registry port of a `Store` (`store.ts`): each tenant's predicate set, stored as versions in
 * force from a time on (so as_of reads fold with the rule of their time). Used by
 * `memory/registry-book.ts` and the export route; validation of the predicates lives in `memory/`.
 */

/** One predicate of a registry. */
export interface PredicateDef {
  /** Canonical snake_case name. */
  name: string;
  /** `single`: a new value replaces the held one; `multi`: values accumulate. */
  cardinality: 'single' | 'multi';
  valueType: 'string' | 'number' | 'boolean' | 'enum' | 'date' | 'ref';
  /** The values an `enum` predicate takes. */
  allowed?: string[];
  /** Other names that mean this predicate. */
  aliases?: string[];
  description?: string;
}

/** A tenant's whole predicate set, in force from `recordedAt` on. */
export interface RegistryVersion {
  id: string;
  tenant: string;
  /** Epoch ms from which this version applies (0 for a tenant's initial registry). */
  recordedAt: number;
  predicates: PredicateDef[];
}

/** Options of `RegistryStore.appendRegistryVersion`. */
export interface AppendRegistryOptions {
  /**
   * A replacement: store it at `recordedAt` or 1 ms after the tenant's newest stored version, whichever
   * is later, decided atomically (replicas replacing at once each get their own time). Never for an
   * import, which keeps the times it restores. @default false
   */
  later?: boolean;
}

/** Registry versions of every tenant. All methods are safe to call concurrently. */
export interface RegistryStore {
  /** Registry versions of a tenant, oldest first. */
  registryVersions(tenant: string): Promise<RegistryVersion[]>;
  /** The version with id `id`, of whichever tenant (ids are unique across tenants); null if none. */
  registryVersionById(id: string): Promise<RegistryVersion | null>;
  /**
   * Stores a version.
   * @returns the version as stored: with `later`, its `recordedAt` moved past the tenant's newest
   *   stored version (another replica's may have taken that very ms)
   */
  appendRegistryVersion(version: RegistryVersion, options?: AppendRegistryOptions): Promise<RegistryVersion>;
}
