/**
 * @module
 * `StaleRegistryError`: a write planned with a registry version that is no longer the tenant's newest
 * (another replica stored one meanwhile). Thrown by `FactStore.writeFacts` before `plan` runs; the memory
 * engine reloads the registry and validates and writes again. Never reaches a client as such.
 */

/** A write's registry versions were not the newest stored ones; nothing was written. */
export class StaleRegistryError extends Error {
  /** The newest stored version id of each tenant the write named (absent: none stored). */
  readonly newest: ReadonlyMap<string, string>;

  constructor(newest: ReadonlyMap<string, string>) {
    super(`the registry of ${[...newest.keys()].join(', ')} changed while the write was planned`);
    this.name = 'StaleRegistryError';
    this.newest = newest;
  }
}
