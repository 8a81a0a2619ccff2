/**
 * @module
 * Per-tenant registry versions: loads them from the store (cached until `invalidate`: an import, or
 * the store telling that another replica wrote a version), seeds a new tenant with the default
 * registry (in force from time 0; stored by the tenant's first write, never by a read), records
 * replacements as new versions, and answers "which rule applied at time T". Called by the memory
 * engine and the registry routes.
 */
import type { Clock } from '../common/clock.ts';
import { newEventId } from '../common/ids.ts';
import { KeyedMutex } from '../common/keyed-mutex.ts';
import type { PredicateDef, RegistryStore, RegistryVersion } from '../store/registry-store.ts';
import { checkRegistryChange, Registry, validatePredicates, versionAt } from './registry.ts';

/** A tenant's versions; `unsaved` is the default first version until a write stores it. */
interface Entry {
  versions: RegistryVersion[];
  registries: Registry[];
  unsaved: RegistryVersion | null;
}

/** Registry versions of every tenant. */
export class RegistryBook {
  readonly #store: RegistryStore;
  readonly #clock: Clock;
  readonly #defaults: readonly PredicateDef[];
  readonly #cache = new Map<string, Entry>();
  readonly #mutex = new KeyedMutex();
  readonly #listeners: ((
    tenant: string,
    before: readonly PredicateDef[],
    after: readonly PredicateDef[],
  ) => Promise<void>)[] = [];

  constructor(store: RegistryStore, clock: Clock, defaults: readonly PredicateDef[]) {
    this.#store = store;
    this.#clock = clock;
    this.#defaults = defaults;
  }

  /** The tenant's entry; `write` stores the default first version if only a read had made it. */
  async #load(tenant: string, write = false): Promise<Entry> {
    const hit = this.#cache.get(tenant);
    if (hit && (!write || hit.unsaved === null)) return hit;
    return this.#mutex.run(tenant, () => this.#loadHeld(tenant, write));
  }

  /** `#load`'s work, for a caller that holds the tenant's mutex. */
  async #loadHeld(tenant: string, write: boolean): Promise<Entry> {
    let entry = this.#cache.get(tenant);
    if (!entry) {
      let versions = await this.#store.registryVersions(tenant);
      let unsaved: RegistryVersion | null = null;
      if (versions.length === 0) {
        // A read of a tenant nobody wrote to answers with the defaults but stores nothing (a read
        // never writes, so a mistyped tenant leaves no row behind); the first write stores it.
        unsaved = {
          id: newEventId(this.#clock.now()),
          tenant,
          recordedAt: 0,
          predicates: this.#defaults.map((d) => ({ ...d })),
        };
        versions = [unsaved];
      }
      entry = { versions, registries: versions.map((v) => new Registry(v.predicates)), unsaved };
      this.#cache.set(tenant, entry);
    }
    if (write && entry.unsaved !== null) {
      await this.#store.appendRegistryVersion(entry.unsaved);
      entry.unsaved = null;
      // Read back: a replica sharing the store may have seeded the tenant at the same moment, and
      // the store keeps one initial version.
      entry.versions = await this.#store.registryVersions(tenant);
      entry.registries = entry.versions.map((v) => new Registry(v.predicates));
    }
    return entry;
  }

  /** The current registry, for a write: the tenant's default first version is stored by then. */
  async currentForWrite(tenant: string): Promise<Registry> {
    return (await this.forWrite(tenant)).registry;
  }

  /**
   * `currentForWrite` with the id of its version, which the write hands to the store
   * (`FactWriteScope.registries`): a replica that stored a newer one meanwhile makes it plan again.
   */
  async forWrite(tenant: string): Promise<{ registry: Registry; versionId: string }> {
    const { registries, versions } = await this.#load(tenant, true);
    return {
      registry: registries[registries.length - 1] as Registry,
      versionId: (versions[versions.length - 1] as RegistryVersion).id,
    };
  }

  /** The versions stored for `tenant`, oldest first (none while only a read has seen it). */
  async storedVersions(tenant: string): Promise<RegistryVersion[]> {
    const entry = await this.#load(tenant);
    return entry.unsaved === null ? [...entry.versions] : [];
  }

  /** The stored version with id `id`, of whichever tenant (an import checks its ids are new); null if none. */
  storedVersionById(id: string): Promise<RegistryVersion | null> {
    return this.#store.registryVersionById(id);
  }

  /**
   * Stores imported versions (already checked by `memory/backup-import.ts`) and reloads the tenant;
   * when the version in force now changed, the listeners run as after a replacement.
   */
  async addImported(tenant: string, versions: RegistryVersion[]): Promise<void> {
    const before = await this.current(tenant);
    const hadStored = (await this.storedVersions(tenant)).length > 0;
    await this.#mutex.run(tenant, async () => {
      for (const v of versions) await this.#store.appendRegistryVersion(v);
      this.invalidate(tenant);
    });
    const after = await this.current(tenant);
    if (hadStored && JSON.stringify(before.predicates) !== JSON.stringify(after.predicates)) {
      for (const listener of this.#listeners) await listener(tenant, before.predicates, after.predicates);
    }
  }

  /** Forgets what is cached of `tenant` (after versions were written behind the book's back: import). */
  invalidate(tenant: string): void {
    this.#cache.delete(tenant);
  }

  /** Forgets every cached tenant (the store's change channel dropped: changes may have been missed). */
  flush(): void {
    this.#cache.clear();
  }

  /** The registry in force at `at` (epoch ms; default now). */
  async at(tenant: string, at?: number): Promise<Registry> {
    const { versions, registries } = await this.#load(tenant);
    const v = versionAt(versions, at ?? this.#clock.now());
    return registries[versions.indexOf(v as RegistryVersion)] as Registry;
  }

  /** The current registry. */
  async current(tenant: string): Promise<Registry> {
    const { registries } = await this.#load(tenant);
    return registries[registries.length - 1] as Registry;
  }

  /** Every version, oldest first (a removed predicate can still be read). */
  async all(tenant: string): Promise<Registry[]> {
    return (await this.#load(tenant)).registries;
  }

  /**
   * The rule that applies to events of `name` at `at` (default now): the version in force, else —
   * for a predicate added later or removed since — the earliest rule it ever had.
   */
  async ruleOf(tenant: string, name: string, at?: number): Promise<PredicateDef | undefined> {
    return (await this.at(tenant, at)).find(name) ?? (await this.defEver(tenant, name));
  }

  /** The cardinality `ruleOf` gives; `multi` for a predicate no version ever had. */
  async cardinalityOf(tenant: string, name: string, at?: number): Promise<'single' | 'multi'> {
    return (await this.ruleOf(tenant, name, at))?.cardinality ?? 'multi';
  }

  /**
   * The earliest rule a predicate ever had (for events of a predicate missing from the version in
   * force: it was added later or removed since); undefined when no version ever had it.
   */
  async defEver(tenant: string, name: string): Promise<PredicateDef | undefined> {
    for (const registry of await this.all(tenant)) {
      const d = registry.find(name);
      if (d) return d;
    }
    return undefined;
  }

  /** Calls `listener` (and waits for it) after every replacement, e.g. to recompute beliefs. */
  onReplace(
    listener: (tenant: string, before: readonly PredicateDef[], after: readonly PredicateDef[]) => Promise<void>,
  ): void {
    this.#listeners.push(listener);
  }

  /**
   * Replaces the tenant's predicate set from now on.
   * @throws {TetherError} 400 for an invalid set or a changed value type.
   */
  async replace(tenant: string, predicates: PredicateDef[]): Promise<RegistryVersion> {
    validatePredicates(predicates);
    const { version, before } = await this.#mutex.run(tenant, async () => {
      // Read under the mutex: the store's change channel may have dropped the entry meanwhile.
      const entry = await this.#loadHeld(tenant, true);
      for (const old of entry.versions) checkRegistryChange(old.predicates, predicates);
      const last = entry.versions[entry.versions.length - 1] as RegistryVersion;
      const asked: RegistryVersion = {
        id: newEventId(this.#clock.now()),
        tenant,
        recordedAt: Math.max(this.#clock.now(), last.recordedAt + 1),
        predicates,
      };
      // `later`: another replica may have stored a version this one has not heard of yet; the store
      // puts ours after it.
      const version = await this.#store.appendRegistryVersion(asked, { later: true });
      if (version.recordedAt === asked.recordedAt) {
        entry.versions.push(version);
        entry.registries.push(new Registry(predicates));
      } else {
        this.invalidate(tenant); // the next read loads the other replica's version too
      }
      return { version, before: last.predicates };
    });
    // Outside the mutex: a listener reads the registry (the rebuild asks each fact's cardinality),
    // and our own version's notification may have emptied the cache by then, so that read reloads
    // under the mutex; holding it here hung the replica with the rebuild's fact locks held.
    for (const listener of this.#listeners) await listener(tenant, before, predicates);
    return version;
  }
}
