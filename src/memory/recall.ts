/**
 * @module
 * The memory engine's read side: exact recall, text search that folds before answering (so it never
 * returns a superseded or retracted value), and history. Every read may be asked "as of T"
 * (observed_at), using the registry rule in force at T. An `as_of` read folds event logs, so it reads
 * at most `maxScanEvents` events, in slices that yield to the event loop between them (one request
 * cannot hold the server for the others); past the cap it is refused, saying so. Knows nothing of HTTP.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Clock } from '../common/clock.ts';
import { invalidRequest } from '../common/errors.ts';
import { words } from '../common/words.ts';
import type { PredicateDef, Store, StoredEvent } from '../store/store.ts';
import { type Belief, compareEvents, foldFact, groupByFact } from './fold.ts';
import { tenantOf } from './namespace.ts';
import type { Registry } from './registry.ts';
import type { RegistryBook } from './registry-book.ts';
import { eventMatches } from './text-match.ts';
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

/** Most events one `as_of` read folds. */
export const MAX_SCAN_EVENTS = 20_000;

/** Facts whose logs are read per slice of an `as_of` search, between two turns of the event loop. */
const SLICE_FACTS = 100;

/** 400 for an `as_of` read that would fold more than `max` events. */
function scanCap(max: number) {
  return invalidRequest(
    'as_of',
    `this read as of a time would fold more than ${max} events (the most one request may read); name a subject and predicate, search fewer words' matches with a lower limit, or read without as_of`,
  );
}

/** Read operations on memory. */
export class MemoryReader {
  readonly #store: Store;
  readonly #registries: RegistryBook;
  readonly #clock: Clock;
  readonly #maxScan: number;

  /** @param options.maxScanEvents most events one `as_of` read folds (@default 20000) */
  constructor(options: { store: Store; registries: RegistryBook; clock: Clock; maxScanEvents?: number }) {
    this.#store = options.store;
    this.#registries = options.registries;
    this.#clock = options.clock;
    this.#maxScan = options.maxScanEvents ?? MAX_SCAN_EVENTS;
  }

  /**
   * Current beliefs (or as of `asOf`) matching the query. Searches answer newest first.
   * Without `asOf` the store's "now" projection answers (no folding); with it the log is folded.
   */
  async recall(query: RecallQuery): Promise<Belief[]> {
    const tenant = tenantOf(query.namespace);
    const registry = await this.#registries.at(tenant, query.asOf ?? this.#clock.now());
    const subject = query.subject === undefined ? undefined : normalizeSubject(query.subject);
    const predicate =
      query.predicate === undefined ? undefined : (await this.#readDef(tenant, registry, query.predicate)).name;
    const terms = query.q === undefined ? null : searchTerms(query.q);
    const filters = {
      namespace: query.namespace,
      subject,
      predicate,
      kind: query.kind,
      minConfidence: query.minConfidence,
      limit: query.limit,
    };
    if (query.asOf === undefined) {
      return terms ? this.#store.searchBeliefs({ ...filters, terms }) : this.#store.currentBeliefs(filters);
    }
    return this.#recallAsOf(query, filters, terms);
  }

  /** The slow path: fold the facts' logs up to `asOf` with the rule of that time. */
  async #recallAsOf(
    query: RecallQuery,
    f: { namespace: string; subject?: string; predicate?: string },
    terms: string[] | null,
  ): Promise<Belief[]> {
    const tenant = tenantOf(query.namespace);
    let groups: Map<string, StoredEvent[]>;
    if (terms) {
      const hits = await this.#store.searchEvents(
        query.namespace,
        terms,
        Math.min(this.#maxScan, Math.max(500, query.limit * 20)),
      );
      const keys = new Map<string, { subject: string; predicate: string }>();
      for (const h of hits) {
        if (f.subject !== undefined && h.subject !== f.subject) continue;
        if (f.predicate !== undefined && h.predicate !== f.predicate) continue;
        keys.set(`${h.subject}\u0000${h.predicate}`, { subject: h.subject, predicate: h.predicate });
      }
      // In slices, yielding between them, and no further than the cap.
      const facts = [...keys.values()];
      const events: StoredEvent[] = [];
      for (let i = 0; i < facts.length; i += SLICE_FACTS) {
        if (i > 0) await nextTurn();
        for (const e of await this.#store.groupEvents(query.namespace, facts.slice(i, i + SLICE_FACTS))) events.push(e);
        if (events.length > this.#maxScan) throw scanCap(this.#maxScan);
      }
      groups = groupByFact(events);
    } else {
      const maxGroups = f.subject !== undefined && f.predicate !== undefined ? 1 : query.limit;
      groups = groupByFact(
        await this.#store.factEvents({
          namespace: query.namespace,
          subject: f.subject,
          predicate: f.predicate,
          maxGroups,
        }),
      );
      let scanned = 0;
      for (const log of groups.values()) scanned += log.length;
      if (scanned > this.#maxScan) throw scanCap(this.#maxScan);
    }
    const out: Belief[] = [];
    let folded = 0;
    for (const log of groups.values()) {
      // Folding is work too: yield after every slice's worth of events.
      folded += log.length;
      if (folded > SLICE_FACTS * 20) {
        folded = 0;
        await nextTurn();
      }
      const first = log[0] as StoredEvent;
      const cardinality = await this.#registries.cardinalityOf(tenant, first.predicate, query.asOf);
      for (const b of foldFact(log, cardinality, query.asOf)) {
        // a search answers with what was believed: a hit on a superseded or retracted value is dropped
        if (terms && !eventMatches(b.event, terms)) continue;
        if (query.minConfidence !== undefined && b.event.confidence < query.minConfidence) continue;
        if (query.kind !== undefined && b.event.kind !== query.kind) continue;
        out.push(b);
      }
    }
    if (terms) out.sort((a, b) => (a.event.id < b.event.id ? 1 : a.event.id > b.event.id ? -1 : 0));
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

  /** A predicate as named by a read: the rule in force, else any older version (it may have been removed). */
  async #readDef(tenant: string, registry: Registry, name: string): Promise<PredicateDef> {
    return (await this.#registries.ruleOf(tenant, name)) ?? registry.resolve(name, 'predicate');
  }
}

/** Splits search text into words (letters and digits); at least one is required. */
export function searchTerms(q: string): string[] {
  if (q.length > MAX_QUERY) throw invalidRequest('q', `must be at most ${MAX_QUERY} characters`);
  const terms = words(q);
  if (terms.length === 0) throw invalidRequest('q', 'must contain at least one word');
  return [...new Set(terms)].slice(0, 16);
}
