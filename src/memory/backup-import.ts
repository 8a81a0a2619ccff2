/**
 * @module
 * Import of a backup (the lines of an export): registry versions and events, checked whole before
 * anything is stored. Each tenant's registry timeline is what is stored plus the versions imported
 * (one with the id of a stored one, or its time and predicates, is the same version): `planImport`,
 * which reads the store. Each event is checked against the version in force when it was recorded, as
 * its write was (`checkImportedEvents`, with `import-check.ts`): that needs only the plans (plain
 * data), so the server runs it on its import worker for a big body (`server/import-off-loop.ts`), or
 * on the event loop in slices (`importBackup`). A refused request stores nothing. The events are then
 * stored in chunks of at most `IMPORT_CHUNK`, sized so each holds the writer about `SLICE_MS`
 * (`common/chunk-sizer.ts`), one writer turn (one transaction) each, so other tenants' writes and
 * reads go on between them (`storeImport`). Called by the import route; knows nothing of HTTP.
 */
import { ChunkSizer } from '../common/chunk-sizer.ts';
import type { Clock } from '../common/clock.ts';
import { invalidRequest, isTetherError, TetherError } from '../common/errors.ts';
import { letOthersRun, SLICE_MS, TimeSlice } from '../common/time-slice.ts';
import type { PredicateDef, RegistryVersion, StoredEvent } from '../store/store.ts';
import type { MemoryEngine } from './engine.ts';
import { checkImportedEvent } from './import-check.ts';
import { checkRegistryChange, Registry, validatePredicates, versionAt } from './registry.ts';
import type { RegistryBook } from './registry-book.ts';

/**
 * Most events (or resume records) stored per transaction of an import. Chunks are stored in the order
 * of the request; a chunk holds the writer for a few ms, not the whole request's worth.
 */
export const IMPORT_CHUNK = 250;

/** A registry version and the line it came from (`line 3`). */
export interface ImportedVersion {
  at: string;
  version: RegistryVersion;
}

/** An event and the line it came from. */
export interface ImportedEvent {
  at: string;
  event: StoredEvent;
}

/** What an import did. */
export interface ImportOutcome {
  imported: number;
  skipped: number;
  registryVersions: number;
}

/** Re-raises a 400 from a predicate check under the line's name (`line 2.registry_version.predicates[0].name`). */
function underLine<T>(at: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (!isTetherError(err) || err.field === undefined) throw err;
    throw invalidRequest(`${at}.registry_version.${err.field}`, err.message.slice(err.field.length + 2));
  }
}

/** The predicates of two versions are the same rules (absent and empty lists alike). */
function sameRules(a: readonly PredicateDef[], b: readonly PredicateDef[]): boolean {
  const canon = (list: readonly PredicateDef[]) =>
    JSON.stringify(
      list.map((d) => [d.name, d.cardinality, d.valueType, d.allowed ?? [], d.aliases ?? [], d.description ?? '']),
    );
  return canon(a) === canon(b);
}

const byTime = (a: RegistryVersion, b: RegistryVersion) =>
  a.recordedAt - b.recordedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * One tenant's registries for an import: the versions to store, its whole timeline once they are, and
 * the registry its events are checked against when it has none (the default, as its first write
 * would get). Plain data: it goes to the import worker as it is (`server/import-worker.ts`).
 */
export interface TenantPlan {
  tenant: string;
  toStore: RegistryVersion[];
  timeline: RegistryVersion[];
  /** The predicates of the tenant's current registry when `timeline` is empty; else null. */
  fallback: readonly PredicateDef[] | null;
}

/** The versions of one tenant to store, and its whole timeline once they are. */
async function planTenant(registries: RegistryBook, tenant: string, imported: ImportedVersion[]): Promise<TenantPlan> {
  const stored = await registries.storedVersions(tenant);
  const timeline = [...stored];
  const toStore: RegistryVersion[] = [];
  for (const { at, version } of imported) {
    underLine(at, () => validatePredicates(version.predicates));
    if (timeline.some((v) => v.id === version.id)) continue;
    // Ids are unique across tenants: one of another tenant's versions (a backup edited to move
    // tenants) is refused here, not at the insert (a 500 after the events were checked).
    if ((await registries.storedVersionById(version.id)) !== null) {
      throw invalidRequest(`${at}.registry_version.id`, "is the id of another tenant's registry version");
    }
    const same = timeline.find((v) => v.recordedAt === version.recordedAt);
    if (same && sameRules(same.predicates, version.predicates)) continue;
    if (same) {
      throw invalidRequest(
        `${at}.registry_version.recorded_at`,
        `tenant '${tenant}' already has another registry in force from ${new Date(version.recordedAt).toISOString()}`,
      );
    }
    for (const old of timeline) underLine(at, () => checkRegistryChange(old.predicates, version.predicates));
    timeline.push(version);
    toStore.push(version);
  }
  timeline.sort(byTime);
  const fallback = timeline.length === 0 ? (await registries.current(tenant)).predicates : null;
  return { tenant, toStore, timeline, fallback };
}

/**
 * The registry plans of every tenant the import names (`tenants`: those of its events and versions),
 * each version checked against the tenant's stored and imported ones.
 * @throws {TetherError} 400 naming the line and field of the first refused version
 */
export async function planImport(
  registries: RegistryBook,
  versions: readonly ImportedVersion[],
  tenants: Iterable<string>,
): Promise<TenantPlan[]> {
  const tenantOfId = new Map<string, string>();
  for (const { at, version } of versions) {
    const first = tenantOfId.get(version.id) ?? version.tenant;
    if (first !== version.tenant) {
      throw invalidRequest(`${at}.registry_version.id`, `is the id of tenant '${first}'s registry version too`);
    }
    tenantOfId.set(version.id, first);
  }
  const plans: TenantPlan[] = [];
  for (const tenant of tenants) {
    plans.push(
      await planTenant(
        registries,
        tenant,
        versions.filter((v) => v.version.tenant === tenant),
      ),
    );
  }
  return plans;
}

/** The tenants of an import's versions and events, in the order first named. */
export function importTenants(versions: readonly ImportedVersion[], events: readonly ImportedEvent[]): string[] {
  return [...new Set([...versions.map((v) => v.version.tenant), ...events.map((e) => e.event.tenant)])];
}

/**
 * Checks each event against its tenant's registry in force when it was recorded, as its write was
 * (`import-check.ts`), letting the event loop turn every few ms. Needs only `plans` (plain data), so
 * it runs in the import worker as well as on the event loop.
 * @throws {TetherError} 400 naming the line and field of the first refused event
 */
export async function checkImportedEvents(
  plans: readonly TenantPlan[],
  events: readonly ImportedEvent[],
  now: number,
): Promise<void> {
  const byTenant = new Map(
    plans.map((p) => [
      p.tenant,
      { timeline: p.timeline, registries: p.timeline.map((v) => new Registry(v.predicates)), fallback: p.fallback },
    ]),
  );
  const fallbacks = new Map<string, Registry>();
  const slice = new TimeSlice();
  for (const { at, event } of events) {
    if (slice.due()) await slice.yield();
    const plan = byTenant.get(event.tenant);
    if (!plan) throw new TetherError('internal', `no registry plan for tenant ${event.tenant}`);
    let registry: Registry;
    if (plan.timeline.length === 0) {
      registry = fallbacks.get(event.tenant) ?? new Registry(plan.fallback ?? []);
      fallbacks.set(event.tenant, registry);
    } else {
      registry = plan.registries[
        plan.timeline.indexOf(versionAt(plan.timeline, event.recordedAt) as RegistryVersion)
      ] as Registry;
    }
    checkImportedEvent(event, registry, now, at);
  }
}

/** Where an import's checked items are taken from in chunks, in request order: an array, or the import worker. */
export interface ImportSource<T> {
  /** Items in all. */
  readonly count: number;
  /** The `n` items from the `from`-th on. */
  take(from: number, n: number): T[] | Promise<T[]>;
}

/** `items` as an `ImportSource`. */
export function arraySource<T>(items: readonly T[]): ImportSource<T> {
  return { count: items.length, take: (from, n) => items.slice(from, from + n) };
}

/** Options of `importBackup`. */
export interface ImportOptions {
  /** Most events per transaction. @default IMPORT_CHUNK */
  chunk?: number;
  /** Time one chunk may hold the writer (ms), as the engine reports it (`held`). @default SLICE_MS */
  sliceMs?: number;
  /** Events in the first chunk, before any was timed. @default min(FIRST_CHUNK, chunk) */
  firstChunk?: number;
}

/**
 * Stores an import whose every line was checked (`planImport`, `checkImportedEvents`): each plan's
 * registry versions, then the events in chunks (each its own transaction, in request order), each
 * sized by the time the one before held the writer: if the server stops between two, the chunks
 * before are stored, and sending the same request again stores the rest (events already stored are
 * skipped by id).
 */
export async function storeImport(
  deps: { registries: RegistryBook; engine: Pick<MemoryEngine, 'importEvents'> },
  plans: readonly TenantPlan[],
  events: ImportSource<StoredEvent>,
  options: ImportOptions = {},
): Promise<ImportOutcome> {
  const chunk = options.chunk ?? IMPORT_CHUNK;
  if (!Number.isInteger(chunk) || chunk < 1) {
    throw new Error(`Cannot import as 'chunk' must be a whole number ≥ 1: got ${chunk}`);
  }
  const sizer = new ChunkSizer({ max: chunk, budgetMs: options.sliceMs ?? SLICE_MS, first: options.firstChunk });
  let registryVersions = 0;
  for (const plan of plans) {
    if (plan.toStore.length > 0) await deps.registries.addImported(plan.tenant, plan.toStore);
    else if (plan.timeline.length === 0) await deps.registries.currentForWrite(plan.tenant);
    registryVersions += plan.toStore.length;
  }
  const imported = await storeInChunks(events, sizer, (part, took) => deps.engine.importEvents(part, { held: took }));
  return { imported, skipped: events.count - imported, registryVersions };
}

/**
 * Stores `items` in order, a chunk per call of `store` (one transaction each), each chunk sized by
 * `sizer` from the time the one before held the writer, as `store` reports it to `took`. Between two
 * chunks the light requests in flight go first, and the writes they queue before the next chunk.
 * @returns how many items `store` said it stored (those already present are not)
 */
export async function storeInChunks<T>(
  items: ImportSource<T>,
  sizer: ChunkSizer,
  store: (part: T[], took: (ms: number) => void) => Promise<number>,
): Promise<number> {
  let stored = 0;
  for (let i = 0; i < items.count; ) {
    if (i > 0) await letOthersRun();
    const part = await items.take(i, sizer.size);
    if (part.length === 0) throw new TetherError('internal', `the import's items ended at ${i} of ${items.count}`);
    stored += await store(part, (ms) => sizer.took(part.length, ms));
    i += part.length;
  }
  return stored;
}

/**
 * Checks then stores `versions` and `events`, on the event loop in slices. Every line is checked
 * before anything is stored (see `storeImport` for how it is stored).
 * @throws {TetherError} 400 naming the line and field of the first refused item; nothing is stored then
 */
export async function importBackup(
  deps: { registries: RegistryBook; engine: Pick<MemoryEngine, 'importEvents'>; clock: Clock },
  items: { versions: ImportedVersion[]; events: ImportedEvent[] },
  options: ImportOptions = {},
): Promise<ImportOutcome> {
  const plans = await planImport(deps.registries, items.versions, importTenants(items.versions, items.events));
  await checkImportedEvents(plans, items.events, deps.clock.now());
  return storeImport(deps, plans, arraySource(items.events.map((e) => e.event)), options);
}
