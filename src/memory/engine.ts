/**
 * @module
 * The memory engine's write side: remember (one or a batch, validated whole before any write) and
 * forget. Appends events; never updates in place. Reads live in `recall.ts`. Knows nothing of HTTP;
 * callers pass an already authorised namespace and actor.
 */
import type { Clock } from '../common/clock.ts';
import { invalidRequest } from '../common/errors.ts';
import { newEventId } from '../common/ids.ts';
import { KeyedMutex } from '../common/keyed-mutex.ts';
import type { Actor, PredicateDef, Store, StoredEvent } from '../store/store.ts';
import { foldFact } from './fold.ts';
import type { RegistryBook } from './registry-book.ts';
import { MAX_TEXT, normalizeSubject, typedValue } from './values.ts';

/** How far ahead of the server clock `observed_at` may be. */
export const MAX_FUTURE_MS = 60_000;

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
}

/** Options for `MemoryEngine`. */
export interface MemoryEngineOptions {
  store: Store;
  registries: RegistryBook;
  clock: Clock;
}

interface Prepared {
  def: PredicateDef;
  event: StoredEvent;
}

/** Write operations on memory. */
export class MemoryEngine {
  readonly #store: Store;
  readonly #registries: RegistryBook;
  readonly #clock: Clock;
  // One writer per namespace at a time: remember's read-decide-append must not interleave.
  readonly #mutex = new KeyedMutex();

  constructor(options: MemoryEngineOptions) {
    this.#store = options.store;
    this.#registries = options.registries;
    this.#clock = options.clock;
  }

  /**
   * Remembers statements in order. All are validated before anything is written.
   * @param fieldPrefix how statements are named in errors (`statements` for a batch, '' for one)
   * @throws {TetherError} 400 naming the field of the first bad statement.
   */
  async remember(ctx: WriteContext, statements: Statement[], fieldPrefix = ''): Promise<RememberResult[]> {
    const tenant = ctx.namespace.slice(0, ctx.namespace.indexOf(':'));
    const registry = await this.#registries.current(tenant);
    const now = this.#clock.now();
    const prepared: Prepared[] = statements.map((s, i) => {
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
      const event: StoredEvent = {
        id: '',
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
      };
      return { def, event };
    });

    return this.#mutex.run(ctx.namespace, async () => {
      const groups = await this.#loadGroups(
        ctx.namespace,
        prepared.map((p) => p.event),
      );
      const toAppend: StoredEvent[] = [];
      const results = prepared.map(({ def, event }): RememberResult => {
        const log = groups.get(groupKey(event)) as StoredEvent[];
        const before = foldFact(log, def.cardinality);
        if (before.some((b) => b.event.valueKey === event.valueKey)) {
          return { stored: false, alreadyKnown: true, superseded: [], event: null };
        }
        const stored = { ...event, id: newEventId(this.#clock.now()) };
        log.push(stored);
        toAppend.push(stored);
        const after = foldFact(log, def.cardinality);
        const superseded =
          def.cardinality === 'single' && after[0]?.event === stored ? before.map((b) => b.event.value) : [];
        return { stored: true, alreadyKnown: false, superseded, event: stored };
      });
      if (toAppend.length > 0) await this.#store.appendEvents(toAppend);
      return results;
    });
  }

  /**
   * Retracts one value, or every value when `value` is undefined. Writes nothing when nothing is held.
   * @returns how many values were withdrawn
   */
  async forget(
    ctx: WriteContext,
    target: { subject: string; predicate: string; value?: unknown },
  ): Promise<{ withdrawn: number; event: StoredEvent | null }> {
    const tenant = ctx.namespace.slice(0, ctx.namespace.indexOf(':'));
    const registry = await this.#registries.current(tenant);
    const def = registry.resolve(target.predicate, 'predicate');
    const subject = normalizeSubject(target.subject);
    const typed = target.value === undefined ? null : typedValue(def, target.value, 'value');
    return this.#mutex.run(ctx.namespace, async () => {
      const log = await this.#store.groupEvents(ctx.namespace, [{ subject, predicate: def.name }]);
      const held = foldFact(log, def.cardinality);
      const hit = typed ? held.filter((b) => b.event.valueKey === typed.valueKey) : held;
      if (hit.length === 0) return { withdrawn: 0, event: null };
      const now = this.#clock.now();
      // A retraction must sort after what it retracts, even a value observed slightly in the future.
      const observedAt = Math.max(now, ...hit.map((b) => b.event.observedAt));
      const event: StoredEvent = {
        id: newEventId(now),
        namespace: ctx.namespace,
        tenant,
        subject,
        predicate: def.name,
        value: typed ? typed.value : null,
        valueKey: typed ? typed.valueKey : null,
        retraction: true,
        kind: null,
        confidence: 1,
        source: null,
        evidence: null,
        observedAt,
        recordedAt: now,
        actor: ctx.actor,
      };
      await this.#store.appendEvents([event]);
      return { withdrawn: hit.length, event };
    });
  }

  async #loadGroups(namespace: string, events: StoredEvent[]): Promise<Map<string, StoredEvent[]>> {
    const wanted = new Map<string, { subject: string; predicate: string }>();
    for (const e of events) wanted.set(groupKey(e), { subject: e.subject, predicate: e.predicate });
    const groups = new Map<string, StoredEvent[]>();
    for (const k of wanted.keys()) groups.set(k, []);
    for (const e of await this.#store.groupEvents(namespace, [...wanted.values()])) {
      groups.get(groupKey(e))?.push(e);
    }
    return groups;
  }
}

function groupKey(e: { subject: string; predicate: string }): string {
  return `${e.subject}\u0000${e.predicate}`;
}
