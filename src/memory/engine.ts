/**
 * @module
 * The memory engine's write side: remember (one or a batch, validated whole before any write),
 * forget, import, and keeping beliefs right after a registry change. Validates here, then hands the
 * writes to the batching writer. Reads live in `recall.ts`. Knows nothing of HTTP; callers pass an
 * already authorised namespace and actor.
 */
import type { Clock } from '../common/clock.ts';
import { invalidRequest, unavailable } from '../common/errors.ts';
import type { Ticket } from '../common/light-first.ts';
import { TimeSlice } from '../common/time-slice.ts';
import type { Actor, BeliefChange, FactStore, StoredEvent } from '../store/fact-store.ts';
import type { PredicateDef } from '../store/registry-store.ts';
import { StaleRegistryError } from '../store/stale-registry.ts';
import { foldFact } from './fold.ts';
import { tenantOf } from './namespace.ts';
import type { Registry } from './registry.ts';
import type { RegistryBook } from './registry-book.ts';
import { MAX_FUTURE_MS, MAX_TEXT, normalizeSubject, typedValue } from './values.ts';
import { MemoryWriter } from './writer.ts';
import type { PendingAssertion, PlannedRegistry, WriterStats } from './writer-jobs.ts';

/** Batches of more statements than this are validated in slices (`#validateInSlices`). */
const SLICED_FROM = 64;

/** Most times one write is validated again because another replica changed the registry meanwhile. */
const MAX_REVALIDATIONS = 5;

/** One statement as a client sends it (already shape-checked). */
export interface Statement {
  subject: string;
  predicate: string;
  value: unknown;
  kind?: string | null;
  confidence?: number;
  source?: string | null;
  /** Epoch ms. */
  observedAt?: number;
  evidence?: string | null;
}

/** What one remember did. */
export interface RememberResult {
  stored: boolean;
  alreadyKnown: boolean;
  /** Values of a single predicate that this one replaced. */
  superseded: unknown[];
  /** The appended event, or null when nothing was written. */
  event: StoredEvent | null;
}

/** Where a write goes and who makes it. */
export interface WriteContext {
  namespace: string;
  actor: Actor;
  /** The light-lane ticket of the request writing (`common/light-first.ts`); none outside a request. */
  lane?: Ticket | null;
}

/** Options for `MemoryEngine`. */
export interface MemoryEngineOptions {
  store: FactStore;
  registries: RegistryBook;
  clock: Clock;
}

/** Write operations on memory. */
export class MemoryEngine {
  readonly #store: FactStore;
  readonly #registries: RegistryBook;
  readonly #clock: Clock;
  readonly #writer: MemoryWriter;
  /** Namespaces being purged, and each purge's end. */
  readonly #purging = new Map<string, Promise<number>>();

  constructor(options: MemoryEngineOptions) {
    this.#store = options.store;
    this.#registries = options.registries;
    this.#clock = options.clock;
    this.#writer = new MemoryWriter(options.store, options.clock);
    this.#registries.onReplace((tenant, before, after) => this.registryChanged(tenant, before, after));
  }

  /** Group-commit counters of the writer (read by /metrics). */
  get writeStats(): Readonly<WriterStats> {
    return this.#writer.stats;
  }

  /**
   * Remembers statements in order. All are validated before anything is written.
   * @param fieldPrefix how statements are named in errors (`statements` for a batch, '' for one)
   * @throws {TetherError} 400 naming the field of the first bad statement.
   */
  async remember(ctx: WriteContext, statements: Statement[], fieldPrefix = ''): Promise<RememberResult[]> {
    const tenant = tenantOf(ctx.namespace);
    const outcomes = await this.#withRegistry(tenant, async (registry, planned) => {
      // A small batch is checked at once: no await, so concurrent calls reach the writer in call order.
      const pending =
        statements.length <= SLICED_FROM
          ? this.#validate(ctx, statements, fieldPrefix, registry)
          : await this.#validateInSlices(ctx, statements, fieldPrefix, registry);
      const purge = this.#purged([ctx.namespace]);
      if (purge) await purge;
      return this.#writer.assert(pending, planned, ctx.lane);
    });
    return outcomes.map((o) => ({
      stored: o.event !== null,
      alreadyKnown: o.alreadyKnown,
      superseded: o.superseded,
      event: o.event,
    }));
  }

  /**
   * Runs `write` with the tenant's current registry and its version; when the store finds that
   * another replica stored a newer version meanwhile (a cardinality change whose rebuild the write
   * would undo), reloads the registry and runs it again: validation included, as for a new request.
   * @throws {TetherError} 503 `unavailable` when the registry kept changing under it
   */
  async #withRegistry<T>(tenant: string, write: (registry: Registry, planned: PlannedRegistry) => Promise<T>) {
    for (let attempt = 1; ; attempt++) {
      const { registry, versionId } = await this.#registries.forWrite(tenant);
      try {
        return await write(registry, { tenant, versionId });
      } catch (err) {
        if (!(err instanceof StaleRegistryError)) throw err;
        this.#registries.invalidate(tenant);
        if (attempt >= MAX_REVALIDATIONS) throw unavailable('the registry is being changed; try again shortly', 1);
      }
    }
  }

  /** `#validate` letting the event loop turn every few ms (`TimeSlice`): a batch has up to 1,000. */
  async #validateInSlices(
    ctx: WriteContext,
    statements: Statement[],
    fieldPrefix: string,
    registry: Registry,
  ): Promise<PendingAssertion[]> {
    const slice = new TimeSlice(ctx.lane);
    const pending: PendingAssertion[] = [];
    const now = this.#clock.now(); // one recorded_at for the whole request, as when checked at once
    for (let from = 0; from < statements.length; from += SLICED_FROM) {
      if (slice.due()) await slice.yield();
      const part = statements.slice(from, from + SLICED_FROM);
      pending.push(...this.#validate(ctx, part, fieldPrefix, registry, { first: from, now }));
    }
    return pending;
  }

  /**
   * The statements as the writer takes them, checked against `registry`, all before any is written.
   * @param at.first the index of `statements[0]` in the request (for the field named in an error)
   * @param at.now the request's time (epoch ms) @default the clock's now
   */
  #validate(
    ctx: WriteContext,
    statements: Statement[],
    fieldPrefix: string,
    registry: Registry,
    { first = 0, now = this.#clock.now() }: { first?: number; now?: number } = {},
  ): PendingAssertion[] {
    const tenant = tenantOf(ctx.namespace);
    const pending: PendingAssertion[] = [];
    for (const [n, s] of statements.entries()) {
      const i = first + n;
      const at = (name: string) => (fieldPrefix ? `${fieldPrefix}[${i}].${name}` : name);
      const def = registry.resolve(s.predicate, at('predicate'));
      const subject = normalizeSubject(s.subject, at('subject'));
      const typed = typedValue(def, s.value, at('value'));
      const observedAt = s.observedAt ?? now;
      if (observedAt > now + MAX_FUTURE_MS) {
        throw invalidRequest(at('observed_at'), 'is more than 60 s in the future');
      }
      if (s.evidence && s.evidence.length > MAX_TEXT) {
        throw invalidRequest(at('evidence'), `must be at most ${MAX_TEXT} characters`);
      }
      pending.push({
        def,
        event: {
          namespace: ctx.namespace,
          tenant,
          subject,
          predicate: def.name,
          value: typed.value,
          valueKey: typed.valueKey,
          retraction: false,
          kind: s.kind ?? null,
          confidence: s.confidence ?? 1,
          source: s.source ?? null,
          evidence: s.evidence ?? null,
          observedAt,
          recordedAt: now,
          actor: ctx.actor,
        },
      });
    }
    return pending;
  }

  /**
   * Retracts one value, or every value when `value` is undefined. Writes nothing when nothing is held.
   * @returns how many values were withdrawn
   */
  async forget(
    ctx: WriteContext,
    target: { subject: string; predicate: string; value?: unknown },
  ): Promise<{ withdrawn: number; event: StoredEvent | null }> {
    return this.#withRegistry(tenantOf(ctx.namespace), async (registry, planned) => {
      const def = registry.resolve(target.predicate, 'predicate');
      const subject = normalizeSubject(target.subject);
      const typed = target.value === undefined ? null : typedValue(def, target.value, 'value');
      const purge = this.#purged([ctx.namespace]);
      if (purge) await purge;
      return this.#writer.retract(
        { namespace: ctx.namespace, actor: ctx.actor, registry: planned },
        { def, subject, value: typed?.value ?? null, valueKey: typed?.valueKey ?? null },
      );
    });
  }

  /**
   * Imports events keeping their ids, then recomputes the beliefs of every fact they touch.
   * @param options.held told how long (ms) the import held the writer, once it committed
   * @returns how many were inserted (ids already present are skipped)
   */
  async importEvents(events: StoredEvent[], options: { held?: (ms: number) => void } = {}): Promise<number> {
    await this.#purged(new Set(events.map((e) => e.namespace)));
    const cardinalityOf = (e: StoredEvent) => this.#registries.cardinalityOf(tenantOf(e.namespace), e.predicate);
    return this.#writer.import(events, cardinalityOf, options.held);
  }

  /**
   * Erases every event of a namespace for good. The batches queued before it finish first (they may
   * have read the namespace's facts); writes to the namespace asked from then on wait until it ends
   * (`#purged`), so none is planned on a half-erased namespace; writes to other namespaces go on
   * meanwhile, between the store's purge steps. What was remembered before the purge was asked for is
   * erased too.
   * @returns how many events were erased
   */
  async purgeNamespace(namespace: string): Promise<number> {
    for (let p = this.#purging.get(namespace); p; p = this.#purging.get(namespace)) await p.catch(() => {});
    const run = (async () => {
      await this.#writer.exclusive(async () => {}); // pushed now: after every batch already queued
      return this.#store.purgeNamespace(namespace);
    })();
    this.#purging.set(namespace, run);
    try {
      return await run;
    } finally {
      this.#purging.delete(namespace);
    }
  }

  /** Waits while any of `namespaces` is being purged; returns at once (no turn) when none is. */
  #purged(namespaces: Iterable<string>): Promise<void> | undefined {
    const waits: Promise<unknown>[] = [];
    for (const ns of namespaces) {
      const p = this.#purging.get(ns);
      if (p) waits.push(p.catch(() => {}));
    }
    if (waits.length === 0) return undefined;
    return Promise.all(waits).then(() => this.#purged(namespaces));
  }

  /**
   * After a registry change: recomputes the beliefs of every fact whose predicate changed cardinality.
   * @param before the predicates in force until now
   */
  async registryChanged(
    tenant: string,
    before: readonly PredicateDef[],
    after: readonly PredicateDef[],
  ): Promise<void> {
    const old = new Map(before.map((d) => [d.name, d.cardinality]));
    const changed = after.filter((d) => old.has(d.name) && old.get(d.name) !== d.cardinality).map((d) => d.name);
    if (changed.length === 0) return;
    await this.#writer.exclusive(async () => {
      for (const predicate of changed) {
        const keys = await this.#store.factKeys(tenant, predicate);
        await this.#rebuild(keys.map((k) => ({ ...k, predicate })));
      }
    });
  }

  /**
   * Folds each fact's whole log with the rule in force now and stores the result as its beliefs, a
   * chunk of facts per store operation (locked, so a replica writing one of them meanwhile waits).
   */
  async #rebuild(facts: { namespace: string; subject: string; predicate: string }[]): Promise<void> {
    const CHUNK = 500;
    for (let i = 0; i < facts.length; i += CHUNK) {
      const chunk = facts.slice(i, i + CHUNK);
      await this.#store.writeFacts({ lock: chunk, heads: [] }, async (_heads, tx) => {
        const changes: BeliefChange[] = [];
        for (const f of chunk) {
          const cardinality = await this.#registries.cardinalityOf(tenantOf(f.namespace), f.predicate);
          const log = await tx.groupEvents(f.namespace, [{ subject: f.subject, predicate: f.predicate }]);
          const current = foldFact(log, cardinality).map((b) => ({ eventId: b.event.id, replaced: b.replaced }));
          changes.push({ namespace: f.namespace, subject: f.subject, predicate: f.predicate, current });
        }
        return { events: [], changes, result: undefined };
      });
    }
  }
}
