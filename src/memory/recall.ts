/**
 * @module
 * The memory engine's read side: exact recall, text search that folds before answering (so it never
 * returns a superseded or retracted value), and history. Every read may be asked "as of T"
 * (observed_at), using the registry rule in force at T. Knows nothing of HTTP.
 */
import type { Clock } from '../common/clock.ts';
import { invalidRequest } from '../common/errors.ts';
import type { PredicateDef, Store, StoredEvent } from '../store/store.ts';
import { type Belief, compareEvents, foldFact, groupByFact } from './fold.ts';
import type { Registry } from './registry.ts';
import type { RegistryBook } from './registry-book.ts';
import { eventMatches, words } from './text-match.ts';
import { normalizeSubject } from './values.ts';

/** What to recall. */
export interface RecallQuery {
  namespace: string;
  subject?: string;
  predicate?: string;
  /** Text search; when set, subject/predicate further filter the hits. */
  q?: string;
  /** Epoch ms. */
  asOf?: number;
  limit: number;
  minConfidence?: number;
  kind?: string;
}

/** Longest accepted search text. */
export const MAX_QUERY = 512;

/** Read operations on memory. */
export class MemoryReader {
  readonly #store: Store;
  readonly #registries: RegistryBook;
  readonly #clock: Clock;

  constructor(options: { store: Store; registries: RegistryBook; clock: Clock }) {
    this.#store = options.store;
    this.#registries = options.registries;
    this.#clock = options.clock;
  }

  /** Current beliefs (or as of `asOf`) matching the query, best first for searches. */
  async recall(query: RecallQuery): Promise<Belief[]> {
    const tenant = tenantOf(query.namespace);
    const registry = await this.#registries.at(tenant, query.asOf ?? this.#clock.now());
    const subject = query.subject === undefined ? undefined : normalizeSubject(query.subject);
    const predicate =
      query.predicate === undefined ? undefined : (await this.#readDef(tenant, registry, query.predicate)).name;

    let groups: Map<string, StoredEvent[]>;
    let terms: string[] | null = null;
    // rank of each fact: the position of its best hit
    const rank = new Map<string, number>();
    if (query.q !== undefined) {
      terms = searchTerms(query.q);
      const hits = await this.#store.searchEvents(query.namespace, terms, Math.max(200, query.limit * 20));
      const keys = new Map<string, { subject: string; predicate: string }>();
      for (const h of hits) {
        if (subject !== undefined && h.subject !== subject) continue;
        if (predicate !== undefined && h.predicate !== predicate) continue;
        const k = `${h.subject}\u0000${h.predicate}`;
        if (!rank.has(k)) rank.set(k, rank.size);
        keys.set(k, { subject: h.subject, predicate: h.predicate });
      }
      groups = groupByFact(await this.#store.groupEvents(query.namespace, [...keys.values()]));
    } else {
      const maxGroups = subject !== undefined && predicate !== undefined ? 1 : query.limit;
      groups = groupByFact(await this.#store.factEvents({ namespace: query.namespace, subject, predicate, maxGroups }));
    }

    const out: Belief[] = [];
    for (const log of groups.values()) {
      const first = log[0] as StoredEvent;
      const def = registry.find(first.predicate) ?? (await this.#anyDef(tenant, first.predicate));
      for (const b of foldFact(log, def?.cardinality ?? 'multi', query.asOf)) {
        // a search answers with what is believed: a hit on a superseded or retracted value is dropped
        if (terms && !eventMatches(b.event, terms)) continue;
        if (query.minConfidence !== undefined && b.event.confidence < query.minConfidence) continue;
        if (query.kind !== undefined && b.event.kind !== query.kind) continue;
        out.push(b);
      }
    }
    if (terms) {
      const at = (b: Belief) => rank.get(`${b.event.subject}\u0000${b.event.predicate}`) ?? 0;
      out.sort((a, b) => at(a) - at(b));
    }
    return out.slice(0, query.limit);
  }

  /** Every event of one (subject, predicate), oldest first in fold order. */
  async history(namespace: string, subjectText: string, predicateText: string): Promise<StoredEvent[]> {
    const tenant = tenantOf(namespace);
    const registry = await this.#registries.current(tenant);
    const def = await this.#readDef(tenant, registry, predicateText);
    const subject = normalizeSubject(subjectText);
    const log = await this.#store.groupEvents(namespace, [{ subject, predicate: def.name }]);
    return log.sort(compareEvents);
  }

  /** A predicate as named by a read: current registry first, then any older version (it may have been removed). */
  async #readDef(tenant: string, registry: Registry, name: string): Promise<PredicateDef> {
    const found = registry.find(name) ?? (await this.#anyDef(tenant, name));
    return found ?? registry.resolve(name, 'predicate');
  }

  /** A predicate missing from the version in force: the earliest rule it ever had (it was added later). */
  async #anyDef(tenant: string, name: string): Promise<PredicateDef | undefined> {
    for (const registry of await this.#registries.all(tenant)) {
      const d = registry.find(name);
      if (d) return d;
    }
    return undefined;
  }
}

/** Splits search text into words (letters and digits); at least one is required. */
export function searchTerms(q: string): string[] {
  if (q.length > MAX_QUERY) throw invalidRequest('q', `must be at most ${MAX_QUERY} characters`);
  const terms = words(q);
  if (terms.length === 0) throw invalidRequest('q', 'must contain at least one word');
  return [...new Set(terms)].slice(0, 16);
}

/** The tenant part of `tenant:agent`. */
export function tenantOf(namespace: string): string {
  return namespace.slice(0, namespace.indexOf(':'));
}
