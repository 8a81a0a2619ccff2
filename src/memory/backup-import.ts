/**
 * @module
 * Import of a backup (the lines of an export): registry versions and events, checked whole before
 * anything is stored. Each tenant's registry timeline is what is stored plus the versions imported
 * (one with the id of a stored one, or its time and predicates, is the same version), and each event
 * is checked against the version in force when it was recorded, as its write was (`import-check.ts`).
 * A refused request stores nothing. The checks let the event loop turn every few ms, and the events
 * are stored in chunks of at most `IMPORT_CHUNK`, sized so each holds the writer about `SLICE_MS`
 * (`common/chunk-sizer.ts`), one writer turn (one transaction) each, so other tenants' writes and reads go
 * on between them. Called by the import route; knows nothing of HTTP.
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

/** The versions of one tenant to store, and its whole timeline once they are. */
async function planTenant(registries: RegistryBook, tenant: string, imported: ImportedVersion[]) {
  const stored = await registries.storedVersions(tenant);
  const timeline = [...stored];
  const toStore: RegistryVersion[] = [];
  for (const { at, version } of imported) {
    underLine(at, () => validatePredicates(version.predicates));
    if (timeline.some((v) => v.id === version.id)) continue;
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
  return { toStore, timeline, registries: timeline.map((v) => new Registry(v.predicates)) };
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
 * Checks then stores `versions` and `events`. Every line is checked before anything is stored; then
 * the events go in chunks (each its own transaction, in request order), each sized by the time the
 * one before held the writer: if the server stops between two, the chunks before are stored, and
 * sending the same request again stores the rest (events already stored are skipped by id).
 * @throws {TetherError} 400 naming the line and field of the first refused item; nothing is stored then
 */
export async function importBackup(
  deps: { registries: RegistryBook; engine: Pick<MemoryEngine, 'importEvents'>; clock: Clock },
  items: { versions: ImportedVersion[]; events: ImportedEvent[] },
  options: ImportOptions = {},
): Promise<ImportOutcome> {
  const chunk = options.chunk ?? IMPORT_CHUNK;
  if (!Number.isInteger(chunk) || chunk < 1) {
    throw new Error(`Cannot import as 'chunk' must be a whole number ≥ 1: got ${chunk}`);
  }
  const sizer = new ChunkSizer({ max: chunk, budgetMs: options.sliceMs ?? SLICE_MS, first: options.firstChunk });
  const tenants = new Set([...items.versions.map((v) => v.version.tenant), ...items.events.map((e) => e.event.tenant)]);
  const plans = new Map<string, Awaited<ReturnType<typeof planTenant>>>();
  for (const tenant of tenants) {
    plans.set(
      tenant,
      await planTenant(
        deps.registries,
        tenant,
        items.versions.filter((v) => v.version.tenant === tenant),
      ),
    );
  }
  const now = deps.clock.now();
  const slice = new TimeSlice();
  for (const { at, event } of items.events) {
    if (slice.due()) await slice.yield();
    const plan = plans.get(event.tenant);
    if (!plan) throw new TetherError('internal', `no registry plan for tenant ${event.tenant}`);
    // A tenant with no version stored nor imported gets the default registry, as its first write would.
    const registry =
      plan.timeline.length === 0
        ? await deps.registries.current(event.tenant)
        : (plan.registries[
            plan.timeline.indexOf(versionAt(plan.timeline, event.recordedAt) as RegistryVersion)
          ] as Registry);
    checkImportedEvent(event, registry, now, at);
  }
  let registryVersions = 0;
  for (const [tenant, plan] of plans) {
    if (plan.toStore.length > 0) await deps.registries.addImported(tenant, plan.toStore);
    else if (plan.timeline.length === 0) await deps.registries.currentForWrite(tenant);
    registryVersions += plan.toStore.length;
  }
  const events = items.events.map((e) => e.event);
  let imported = 0;
  for (let i = 0; i < events.length; ) {
    // Between two chunks the light requests in flight go first, and the writes they queue before the next chunk.
    if (i > 0) await letOthersRun();
    const part = events.slice(i, i + sizer.size);
    imported += await deps.engine.importEvents(part, { held: (ms) => sizer.took(part.length, ms) });
    i += part.length;
  }
  return { imported, skipped: events.length - imported, registryVersions };
}
